import { mount } from "svelte";
import App from "./App.svelte";
import { offline } from "./offline/offline.svelte.ts";
import "./styles/tokens.css";
import "./styles/base.css";

mount(App, { target: document.getElementById("app")! });
// The offline copy (service worker) of a built app; registered after load, so it never slows the first paint.
void offline.start();

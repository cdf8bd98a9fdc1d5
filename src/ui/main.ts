import { mount } from "svelte";
import App from "./App.svelte";
import "./styles/tokens.css";
import "./styles/base.css";

// App starts the offline copy (service worker) of a built app, after the page's own startup downloads.
mount(App, { target: document.getElementById("app")! });

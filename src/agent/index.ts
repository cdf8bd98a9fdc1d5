/** `evalrx/agent`: filled by its issue. */
export {};

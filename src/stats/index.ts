/** `evalrx/stats`: filled by its issue. */
export {};

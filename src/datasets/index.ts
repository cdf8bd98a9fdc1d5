/** `evalrx/datasets`: filled by its issue. */
export {};

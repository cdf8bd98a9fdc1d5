/** `evalrx/evals`: filled by its issue. */
export {};

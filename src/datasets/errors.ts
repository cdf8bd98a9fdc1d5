/** Thrown when a file cannot be read as the format at all (as opposed to bad rows in it). */
export class UnreadableFileError extends Error {
  override readonly name = "UnreadableFileError";
}

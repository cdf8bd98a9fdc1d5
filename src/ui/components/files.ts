/** A file the user dropped or picked, with its path relative to what was dropped. */
export interface DroppedFile {
  readonly file: File;
  /** Path relative to what was dropped or picked (`pope/images/a.png`), or the file name. */
  readonly path: string;
}

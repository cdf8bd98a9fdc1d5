/**
 * The leakage guard: the sealed split lives in here, and only M4 may open it,
 * and only after the hypotheses were frozen in the run's log. Opening writes
 * `sealed.opened`, so the log itself proves the order: every `hypothesis.stated`
 * and the `hypotheses.frozen` event come before the first sealed read.
 */
import type { EventLog } from "./events.ts";
import { selectRows, type CaseTable } from "./signals.ts";

/** The sealed cases behind a guard: counted at once, read only by `open` once the hypotheses are frozen. */
export class SealedSplit {
  readonly #source: CaseTable;
  readonly #rows: readonly number[];
  readonly #log: EventLog;
  #table: CaseTable | undefined;

  /** How many cases are sealed (the count is known; their signals and labels are not read). */
  readonly n: number;

  /** Seals the rows `rows` of `source`: nothing of them is copied or read until `open`. */
  constructor(source: CaseTable, rows: readonly number[], log: EventLog) {
    this.#source = source;
    this.#rows = [...rows];
    this.#log = log;
    this.n = rows.length;
  }

  get opened(): boolean {
    return this.#table !== undefined;
  }

  /**
   * The sealed cases, for M4. Throws when the hypotheses are not frozen yet:
   * reading them earlier would let the sealed split shape the hypotheses it decides.
   *
   * Example: `sealed.open("M4")` after `log.append("M3", "hypotheses.frozen", …)`.
   */
  open(stage: "M4" | "M5"): CaseTable {
    const frozen = this.#log.find("hypotheses.frozen");
    if (!frozen)
      throw new Error(
        `SealedSplit.open(): ${stage} asked for the sealed cases before the hypotheses were frozen; ` +
          "state and freeze hypotheses (M3) first — the sealed split is read once, to decide them",
      );
    if (!this.#table) {
      this.#log.append(stage, "sealed.opened", { n: this.n, frozenAt: frozen.seq });
      this.#table = selectRows(this.#source, this.#rows);
    }
    return this.#table;
  }
}

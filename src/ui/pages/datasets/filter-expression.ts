/**
 * A small, safe filter language over a dataset's cases, read by hand (no
 * `eval`, no `Function`): the expression is parsed into a tree once and the
 * tree is walked per case.
 *
 *   split == "adversarial" and "color" in tags and not label
 *   meta.difficulty >= 3 or id contains "pope-"
 *   prompt matches "^is there" and split in ["random", "popular"]
 *
 * Grammar (keywords are lowercase; `&&`, `||`, `!` are accepted too):
 *
 *   expr     := and ("or" and)*
 *   and      := unary ("and" unary)*
 *   unary    := "not" unary | compare
 *   compare  := operand [op operand]     op: == != < <= > >= in, not in, contains, matches
 *   operand  := "string" | 'string' | number | true | false | null | [operand, …] | field | ( expr )
 *   field    := id | prompt | image | expected | split | cluster | status | label | tags
 *             | input.prompt | input.image | meta | meta.key | meta["any key"] (and deeper: meta.a.b)
 *
 * Meaning: a missing field is `null`; `==` compares values (lists element by
 * element); `<`… compare two numbers or two strings (anything else is false);
 * `x in list` is membership, `x in "text"` is a substring, `x in object` is a
 * key; `contains` is `in` reversed; `matches` is a regular expression (the
 * right side, a string). A bare operand is true unless it is false, null, "",
 * 0 or an empty list, so `not label` holds for failed and unlabelled cases.
 */

/** The parts of a case a filter reads (a `StoredCase` or an `ImportedCase` fits). */
export interface FilterableCase {
  readonly id: string;
  readonly input: { readonly prompt: string; readonly image?: string };
  readonly expected?: unknown;
  readonly tags: readonly string[];
  readonly split?: string;
  readonly cluster?: string;
  readonly status: string;
  readonly label?: boolean;
  readonly meta: Readonly<Record<string, unknown>>;
}

/** A filter that cannot be read: where (0-based offset and 1-based column) and what was expected there. */
export class FilterSyntaxError extends Error {
  override readonly name = "FilterSyntaxError";
  constructor(
    /** 0-based offset into the expression. */
    readonly position: number,
    /** What went wrong there, e.g. "expected a value … found 'and'". */
    readonly detail: string,
  ) {
    super(`at column ${position + 1}: ${detail}`);
  }
}

/** The fields a filter may name (besides `meta.<key>`), for messages and for the page's help. */
export const FILTER_FIELDS = [
  "id",
  "prompt",
  "image",
  "expected",
  "split",
  "cluster",
  "status",
  "label",
  "tags",
  "meta",
] as const;

type Value = unknown;
type Compare = "==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not in" | "contains" | "matches";

/** The parsed expression. */
export type FilterNode =
  | { readonly kind: "literal"; readonly value: Value }
  | { readonly kind: "list"; readonly items: readonly FilterNode[] }
  | { readonly kind: "field"; readonly path: readonly string[] }
  | { readonly kind: "not"; readonly operand: FilterNode }
  | { readonly kind: "and" | "or"; readonly left: FilterNode; readonly right: FilterNode }
  | {
      readonly kind: "compare";
      readonly op: Compare;
      readonly left: FilterNode;
      readonly right: FilterNode;
      /** The compiled pattern of a `matches` whose right side is a literal. */
      readonly pattern?: RegExp;
    };

interface Token {
  readonly type: "string" | "number" | "word" | "symbol" | "end";
  readonly text: string;
  readonly value?: Value;
  readonly at: number;
}

const SYMBOLS = ["==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "(", ")", "[", "]", ",", "."];

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if (ch === '"' || ch === "'") {
      const start = i;
      let text = "";
      i++;
      for (;;) {
        if (i >= source.length)
          throw new FilterSyntaxError(start, `the string that starts here is not closed; expected a closing ${ch}`);
        const c = source[i]!;
        if (c === ch) {
          i++;
          break;
        }
        if (c === "\\") {
          const next = source[i + 1];
          if (next === undefined)
            throw new FilterSyntaxError(i, `expected a character after \\ (\\" \\' \\\\ \\n \\t)`);
          text += next === "n" ? "\n" : next === "t" ? "\t" : next;
          i += 2;
          continue;
        }
        text += c;
        i++;
      }
      tokens.push({ type: "string", text: source.slice(start, i), value: text, at: start });
      continue;
    }
    const previous = tokens.at(-1);
    const afterDot = previous?.type === "symbol" && previous.text === ".";
    // After a field, a dot reads a key (meta.a, meta.5), never a number (.5).
    const fieldDot =
      ch === "." && (previous?.type === "word" || (previous?.type === "symbol" && previous.text === "]"));
    if (afterDot) {
      const key = /^[\w-]+/.exec(source.slice(i));
      if (key) {
        tokens.push({ type: "word", text: key[0], at: i });
        i += key[0].length;
        continue;
      }
    }
    const number = fieldDot ? null : /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.exec(source.slice(i));
    if (number) {
      tokens.push({ type: "number", text: number[0], value: Number(number[0]), at: i });
      i += number[0].length;
      continue;
    }
    const word = /^[A-Za-z_]\w*/.exec(source.slice(i));
    if (word) {
      tokens.push({ type: "word", text: word[0], at: i });
      i += word[0].length;
      continue;
    }
    const symbol = SYMBOLS.find((s) => source.startsWith(s, i));
    if (symbol) {
      tokens.push({ type: "symbol", text: symbol, at: i });
      i += symbol.length;
      continue;
    }
    if (ch === "=") throw new FilterSyntaxError(i, "'=' is not an operator; use == to compare");
    throw new FilterSyntaxError(i, `unexpected character '${ch}'`);
  }
  tokens.push({ type: "end", text: "", at: source.length });
  return tokens;
}

const KEYWORDS = new Set(["and", "or", "not", "in", "contains", "matches", "true", "false", "null"]);

function describeToken(t: Token): string {
  return t.type === "end" ? "the end of the expression" : `'${t.text}'`;
}

/** How far apart two words are (edits), for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

class Parser {
  #tokens: Token[];
  #at = 0;

  constructor(source: string) {
    this.#tokens = tokenize(source);
  }

  get #peek(): Token {
    return this.#tokens[this.#at]!;
  }

  #word(text: string): boolean {
    const t = this.#peek;
    if (t.type === "word" && t.text === text) {
      this.#at++;
      return true;
    }
    return false;
  }

  #symbol(text: string): boolean {
    const t = this.#peek;
    if (t.type === "symbol" && t.text === text) {
      this.#at++;
      return true;
    }
    return false;
  }

  parse(): FilterNode {
    const node = this.#or();
    const t = this.#peek;
    if (t.type !== "end") {
      const what = t.type === "symbol" && t.text === ")" ? " (a ')' without its '(')" : "";
      throw new FilterSyntaxError(
        t.at,
        `expected 'and', 'or' or the end of the expression, found ${describeToken(t)}${what}`,
      );
    }
    return node;
  }

  #or(): FilterNode {
    let left = this.#and();
    while (this.#word("or") || this.#symbol("||")) left = { kind: "or", left, right: this.#and() };
    return left;
  }

  #and(): FilterNode {
    let left = this.#unary();
    while (this.#word("and") || this.#symbol("&&")) left = { kind: "and", left, right: this.#unary() };
    return left;
  }

  #unary(): FilterNode {
    if (this.#word("not") || this.#symbol("!")) return { kind: "not", operand: this.#unary() };
    return this.#compare();
  }

  #compare(): FilterNode {
    const left = this.#operand();
    const t = this.#peek;
    let op: Compare | undefined;
    if (t.type === "symbol" && ["==", "!=", "<", "<=", ">", ">="].includes(t.text)) op = t.text as Compare;
    else if (t.type === "word" && (t.text === "in" || t.text === "contains" || t.text === "matches")) op = t.text;
    else if (t.type === "word" && t.text === "not" && this.#tokens[this.#at + 1]?.text === "in") {
      this.#at++;
      op = "not in";
    }
    if (!op) return left;
    this.#at++;
    const rightToken = this.#peek;
    const right = this.#operand();
    if (op === "matches") {
      if (right.kind !== "literal" || typeof right.value !== "string")
        throw new FilterSyntaxError(rightToken.at, `expected a "regular expression" (a string) after 'matches'`);
      try {
        return { kind: "compare", op, left, right, pattern: new RegExp(right.value, "u") };
      } catch (error) {
        throw new FilterSyntaxError(
          rightToken.at,
          `not a regular expression: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    return { kind: "compare", op, left, right };
  }

  #operand(): FilterNode {
    const t = this.#peek;
    if (t.type === "string" || t.type === "number") {
      this.#at++;
      return { kind: "literal", value: t.value };
    }
    if (t.type === "symbol" && t.text === "(") {
      this.#at++;
      const inner = this.#or();
      const close = this.#peek;
      if (!this.#symbol(")"))
        throw new FilterSyntaxError(
          close.at,
          `expected ')' to close the '(' at column ${t.at + 1}, found ${describeToken(close)}`,
        );
      return inner;
    }
    if (t.type === "symbol" && t.text === "[") {
      this.#at++;
      const items: FilterNode[] = [];
      if (!this.#symbol("]")) {
        for (;;) {
          items.push(this.#operand());
          if (this.#symbol("]")) break;
          const sep = this.#peek;
          if (!this.#symbol(","))
            throw new FilterSyntaxError(sep.at, `expected ',' or ']' in the list, found ${describeToken(sep)}`);
        }
      }
      return { kind: "list", items };
    }
    if (t.type === "word") {
      if (t.text === "true" || t.text === "false" || t.text === "null") {
        this.#at++;
        return { kind: "literal", value: t.text === "null" ? null : t.text === "true" };
      }
      if (!KEYWORDS.has(t.text)) return this.#field();
    }
    throw new FilterSyntaxError(
      t.at,
      `expected a value (a field such as split or tags, a "string", a number, true, false, null, a [list] or ( … )), found ${describeToken(t)}`,
    );
  }

  #field(): FilterNode {
    const head = this.#peek;
    this.#at++;
    let path: string[];
    switch (head.text) {
      case "prompt":
      case "image":
        path = ["input", head.text];
        break;
      case "input":
        path = ["input", "prompt"];
        break;
      default:
        if (!(FILTER_FIELDS as readonly string[]).includes(head.text)) {
          const near = FILTER_FIELDS.find((f) => distance(f, head.text.toLowerCase()) <= 2);
          throw new FilterSyntaxError(
            head.at,
            `unknown field '${head.text}'${near ? ` (did you mean '${near}'?)` : ""}; fields are ${FILTER_FIELDS.join(", ")}, meta.<key>, input.prompt and input.image`,
          );
        }
        path = [head.text];
    }
    const keys: string[] = [];
    for (;;) {
      if (this.#symbol(".")) {
        const key = this.#peek;
        if (key.type !== "word" && key.type !== "number")
          throw new FilterSyntaxError(key.at, `expected a key after '.', found ${describeToken(key)}`);
        this.#at++;
        keys.push(key.text);
      } else if (
        this.#peek.type === "symbol" &&
        this.#peek.text === "[" &&
        this.#tokens[this.#at + 1]?.type === "string"
      ) {
        this.#at++;
        keys.push(String(this.#peek.value));
        this.#at++;
        const close = this.#peek;
        if (!this.#symbol("]"))
          throw new FilterSyntaxError(close.at, `expected ']' after the key, found ${describeToken(close)}`);
      } else break;
    }
    if (keys.length) {
      if (head.text === "input") {
        if (keys.length !== 1 || (keys[0] !== "prompt" && keys[0] !== "image"))
          throw new FilterSyntaxError(head.at, "input has two fields: input.prompt and input.image");
        path = ["input", keys[0]];
      } else if (head.text === "meta") path = ["meta", ...keys];
      else throw new FilterSyntaxError(head.at, `'${head.text}' has no fields; only meta (meta.key) and input do`);
    }
    return { kind: "field", path };
  }
}

/**
 * What tree does this filter expression make? Throws a `FilterSyntaxError`
 * naming the column and what was expected there.
 *
 * @example parseFilter('split == "adversarial" and not label').kind // "and"
 */
export function parseFilter(source: string): FilterNode {
  return new Parser(source).parse();
}

function read(c: FilterableCase, path: readonly string[]): Value {
  let value: unknown = c;
  for (const key of path) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) return null;
    value = (value as Record<string, unknown>)[key];
  }
  return value === undefined ? null : value;
}

function evaluate(node: FilterNode, c: FilterableCase): Value {
  switch (node.kind) {
    case "literal":
      return node.value;
    case "list":
      return node.items.map((item) => evaluate(item, c));
    case "field":
      return read(c, node.path);
    case "not":
      return !truthy(evaluate(node.operand, c));
    case "and":
      return truthy(evaluate(node.left, c)) && truthy(evaluate(node.right, c));
    case "or":
      return truthy(evaluate(node.left, c)) || truthy(evaluate(node.right, c));
    case "compare":
      return compare(node, evaluate(node.left, c), evaluate(node.right, c));
  }
}

function compare(node: Extract<FilterNode, { kind: "compare" }>, a: Value, b: Value): boolean {
  switch (node.op) {
    case "==":
      return equal(a, b);
    case "!=":
      return !equal(a, b);
    case "<":
    case "<=":
    case ">":
    case ">=": {
      if (!((typeof a === "number" && typeof b === "number") || (typeof a === "string" && typeof b === "string")))
        return false;
      return node.op === "<" ? a < b : node.op === "<=" ? a <= b : node.op === ">" ? a > b : a >= b;
    }
    case "in":
      return contains(b, a);
    case "not in":
      return !contains(b, a);
    case "contains":
      return contains(a, b);
    case "matches":
      return typeof a === "string" && node.pattern!.test(a);
  }
}

function contains(container: Value, item: Value): boolean {
  if (Array.isArray(container)) return container.some((x) => equal(x, item));
  if (typeof container === "string") return typeof item === "string" && container.includes(item);
  if (container !== null && typeof container === "object")
    return typeof item === "string" && Object.hasOwn(container, item);
  return false;
}

function equal(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (
    a !== null &&
    b !== null &&
    typeof a === "object" &&
    typeof b === "object" &&
    !Array.isArray(a) &&
    !Array.isArray(b)
  ) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return (
      ka.length === kb.length &&
      ka.every(
        (k) => Object.hasOwn(b, k) && equal((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    );
  }
  return false;
}

function truthy(value: Value): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return Boolean(value);
}

/**
 * Which cases does this filter expression keep? Returns a predicate (an empty
 * or blank expression keeps every case); throws a `FilterSyntaxError` that
 * names the column and what was expected there.
 *
 * @example
 * const keep = compileFilter('split == "adversarial" and "color" in tags and not label');
 * keep({ id: "a", input: { prompt: "?" }, tags: ["color"], split: "adversarial", status: "active", meta: {} }) // true
 */
export function compileFilter(source: string): (c: FilterableCase) => boolean {
  if (source.trim() === "") return () => true;
  const tree = parseFilter(source);
  return (c) => truthy(evaluate(tree, c));
}

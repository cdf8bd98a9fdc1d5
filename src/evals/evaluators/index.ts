export { exact, type ExactOptions } from "./exact.ts";
export { contains, type ContainsOptions } from "./contains.ts";
export { fuzzy, similarity, type FuzzyOptions } from "./fuzzy.ts";
export { jsonMatch, type JsonMatchOptions } from "./json-match.ts";
export { regex, type RegexOptions } from "./regex.ts";
export { yesNo, extractYesNo, popeMetrics, type YesNoAnswer, type YesNoRule } from "./yes-no.ts";
export { chair, chairMetrics, mentionedObjects, type ChairOptions } from "./chair.ts";
export { judge, judgePrompt, type JudgeOptions } from "./judge.ts";

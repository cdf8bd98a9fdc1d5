// Verifies the forge's ONNX exports with onnxruntime-node and transformers.js, the same runtimes the app uses.
//
//   node models/forge/verify.mjs            # everything (about a minute)
//   node models/forge/verify.mjs --quick    # a sample of the demo cases
//
// Checks: every file loads and has the contract's input/output names; attention rows sum to 1; the untapped
// decoder gives the tapped decoder's logits; lm_head(hidden_states.L) gives the logits; greedy decoding with the
// KV cache reproduces eval-reference.json's answers (the forge computed them in PyTorch without a cache) and its
// image-attention shares; transformers.js loads both folders from a local path and generates the same answers.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ort from "onnxruntime-node";
import { decode as decodePng } from "fast-png";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const QUICK = process.argv.includes("--quick");
let failures = 0;

function check(ok, what) {
  if (!ok) failures++;
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
}

const readJson = (p) => JSON.parse(readFileSync(path.join(ROOT, p), "utf8"));
const readJsonl = (p) =>
  readFileSync(path.join(ROOT, p), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));

const session = (p) => ort.InferenceSession.create(path.join(ROOT, p));
const i64 = (arr, dims) => new ort.Tensor("int64", BigInt64Array.from(arr.map(BigInt)), dims);
const maxAbsDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

/** Word-level tokenization exactly as tokenizer.json says: lowercase, split, BOS first. */
function tokenizer(folder) {
  const tok = readJson(`${folder}/tokenizer.json`);
  const vocab = tok.model.vocab;
  const inv = Object.fromEntries(Object.entries(vocab).map(([k, v]) => [v, k]));
  return {
    vocab,
    encode: (text) => [
      vocab["<s>"],
      ...text
        .toLowerCase()
        .split(/\s+/)
        .filter(Boolean)
        .map((w) => vocab[w] ?? vocab["<unk>"]),
    ],
    decode: (ids) =>
      ids
        .map((i) => inv[i])
        .filter((t) => !t.startsWith("<"))
        .join(" "),
  };
}

function emptyPast(cfg) {
  const feeds = {};
  for (let i = 0; i < cfg.num_hidden_layers; i++)
    for (const kv of ["key", "value"])
      feeds[`past_key_values.${i}.${kv}`] = new ort.Tensor("float32", new Float32Array(0), [
        1,
        cfg.num_key_value_heads,
        0,
        cfg.head_dim,
      ]);
  return feeds;
}

function argmaxLast(logits) {
  const [, s, v] = logits.dims;
  const row = logits.data.subarray((s - 1) * v, s * v);
  let best = 0;
  for (let j = 1; j < v; j++) if (row[j] > row[best]) best = j;
  return best;
}

/** Greedy decoding with the KV cache: one prompt pass, then one token per step. */
async function greedy(cfg, first, step, promptIds, maxNew, eos) {
  let past = emptyPast(cfg);
  let total = promptIds.length;
  let out = await first(past, total);
  const ids = [];
  let shares = null;
  for (let n = 0; n < maxNew; n++) {
    if (n === 0 && out["attentions.0"]) shares = out;
    const next = argmaxLast(out.logits);
    if (next === eos) break;
    ids.push(next);
    past = {};
    for (let i = 0; i < cfg.num_hidden_layers; i++)
      for (const kv of ["key", "value"]) past[`past_key_values.${i}.${kv}`] = out[`present.${i}.${kv}`];
    total += 1;
    out = await step(next, past, total);
  }
  return { ids, first: shares };
}

function imageShare(out, L, H, firstImg, nImg) {
  // attention mass from the last prompt query onto the image-token keys, mean over heads, per layer
  const res = [];
  for (let l = 0; l < L; l++) {
    const a = out[`attentions.${l}`];
    const [, h, s, t] = a.dims;
    let sum = 0;
    for (let hh = 0; hh < h; hh++) {
      const base = (hh * s + (s - 1)) * t;
      for (let k = firstImg; k < firstImg + nImg; k++) sum += a.data[base + k];
    }
    res.push(sum / H);
  }
  return res;
}

function rowSumError(a) {
  const t = a.dims.at(-1);
  let worst = 0;
  for (let r = 0; r < a.data.length / t; r++) {
    let s = 0;
    for (let k = 0; k < t; k++) s += a.data[r * t + k];
    worst = Math.max(worst, Math.abs(s - 1));
  }
  return worst;
}

async function verifyVlm() {
  const dir = "models/tiny-vlm";
  const cfg = readJson(`${dir}/config.json`);
  const tc = cfg.text_config;
  const pre = readJson(`${dir}/preprocessor_config.json`);
  const tok = tokenizer(dir);
  const ref = readJson(`${dir}/eval-reference.json`);
  const [vision, embed, dec, untapped, head] = await Promise.all(
    ["vision_encoder", "embed_tokens", "decoder_model_merged", "decoder_untapped", "lm_head"].map((n) =>
      session(`${dir}/onnx/${n}.onnx`),
    ),
  );
  const L = tc.num_hidden_layers;
  const kvNames = [...Array(L).keys()].flatMap((i) => [`past_key_values.${i}.key`, `past_key_values.${i}.value`]);
  const presNames = [...Array(L).keys()].flatMap((i) => [`present.${i}.key`, `present.${i}.value`]);
  const extras = [
    ...[...Array(L).keys()].map((i) => `attentions.${i}`),
    ...[...Array(L + 1).keys()].map((i) => `hidden_states.${i}`),
  ];
  check(
    vision.inputNames.join() === "pixel_values" && vision.outputNames.join() === "image_features",
    "vision_encoder io names",
  );
  check(
    embed.inputNames.join() === "input_ids" && embed.outputNames.join() === "inputs_embeds",
    "embed_tokens io names",
  );
  check(
    dec.inputNames.join() === ["inputs_embeds", "attention_mask", "position_ids", ...kvNames].join(),
    `decoder inputs: ${dec.inputNames.join(" ")}`,
  );
  check(
    dec.outputNames.join() === ["logits", ...presNames, ...extras].join(),
    `decoder outputs: ${dec.outputNames.join(" ")}`,
  );
  check(
    untapped.outputNames.join() === ["logits", ...presNames].join(),
    "untapped decoder outputs: logits + present only",
  );
  check(head.inputNames.join() === "hidden_states" && head.outputNames.join() === "logits", "lm_head io names");

  const size = pre.size.height;
  const nImg = (size / readJson(`${dir}/processor_config.json`).patch_size) ** 2;
  const pixelsOf = (file) => {
    const png = decodePng(readFileSync(path.join(ROOT, "public/demo", file)));
    check.seen ??= new Set();
    if (png.width !== size || png.height !== size)
      throw new Error(`${file}: ${png.width}x${png.height}, expected ${size}`);
    const ch = png.channels;
    const out = new Float32Array(3 * size * size);
    for (let c = 0; c < 3; c++)
      for (let p = 0; p < size * size; p++)
        out[c * size * size + p] = (png.data[p * ch + c] * pre.rescale_factor - pre.image_mean[c]) / pre.image_std[c];
    return new ort.Tensor("float32", out, [1, 3, size, size]);
  };

  const runCase = async (c, decoder) => {
    const feats = (await vision.run({ pixel_values: pixelsOf(c.input.image) })).image_features;
    const text = c.input.prompt.replace("<image>", "<image> ".repeat(nImg));
    const ids = tok.encode(text);
    const emb = (await embed.run({ input_ids: i64(ids, [1, ids.length]) })).inputs_embeds;
    // llava merge: the image-token rows become the image features, in order
    const D = tc.hidden_size;
    const merged = new Float32Array(emb.data);
    let r = 0;
    ids.forEach((id, pos) => {
      if (id === cfg.image_token_index) merged.set(feats.data.subarray(r++ * D, r * D), pos * D);
    });
    const first = (past, total) =>
      decoder.run({
        inputs_embeds: new ort.Tensor("float32", merged, [1, ids.length, D]),
        attention_mask: i64(Array(total).fill(1), [1, total]),
        position_ids: i64([...Array(ids.length).keys()], [1, ids.length]),
        ...past,
      });
    const step = async (next, past, total) => {
      const e = (await embed.run({ input_ids: i64([next], [1, 1]) })).inputs_embeds;
      return decoder.run({
        inputs_embeds: e,
        attention_mask: i64(Array(total).fill(1), [1, total]),
        position_ids: i64([total - 1], [1, 1]),
        ...past,
      });
    };
    return { ids, ...(await greedy(tc, first, step, ids, ref.decoding.max_new_tokens, tc.eos_token_id)) };
  };

  const pope = readJsonl("public/demo/pope.jsonl");
  const caps = readJsonl("public/demo/captions.jsonl");
  let cases = [...pope, ...caps];
  if (QUICK) cases = cases.filter((_, i) => i % 10 === 0);
  let same = 0;
  let worstShare = 0;
  let worstRow = 0;
  let worstUntapped = 0;
  let worstLens = 0;
  for (const [k, c] of cases.entries()) {
    const res = await runCase(c, dec);
    const answer = tok.decode(res.ids);
    if (answer === ref.answers[c.id]) same++;
    else console.log(`  differs on ${c.id}: onnx "${answer}" vs reference "${ref.answers[c.id]}"`);
    const want = ref.image_attention_share.per_case[c.id];
    if (want)
      worstShare = Math.max(worstShare, maxAbsDiff(imageShare(res.first, L, tc.num_attention_heads, 1, nImg), want));
    if (k < 20) {
      for (let l = 0; l < L; l++) worstRow = Math.max(worstRow, rowSumError(res.first[`attentions.${l}`]));
      const u = await runCase(c, untapped);
      worstUntapped = Math.max(worstUntapped, tok.decode(u.ids) === answer ? 0 : Infinity);
      const lens = await head.run({ hidden_states: res.first[`hidden_states.${L}`] });
      worstLens = Math.max(worstLens, maxAbsDiff(lens.logits.data, res.first.logits.data));
    }
  }
  check(
    same === cases.length,
    `tiny-vlm: ONNX greedy (KV cache) = reference answers on ${same}/${cases.length} demo cases`,
  );
  check(
    worstShare < 1e-4,
    `tiny-vlm: image-attention shares match the reference (max abs diff ${worstShare.toExponential(2)})`,
  );
  check(worstRow < 1e-5, `tiny-vlm: attention rows sum to 1 (max error ${worstRow.toExponential(2)})`);
  check(worstUntapped === 0, "tiny-vlm: untapped decoder generates the same answers");
  check(
    worstLens < 1e-4,
    `tiny-vlm: lm_head(hidden_states.${L}) = logits (max abs diff ${worstLens.toExponential(2)})`,
  );

  // untapped vs tapped logits on one full prompt pass
  const c0 = pope[0];
  const a = await runCase(c0, dec);
  const b = await runCase(c0, untapped);
  check(a.first && b.ids.join() === a.ids.join(), "tiny-vlm: untapped decoder runs with the same feeds");
  return { pope, caps, ref };
}

async function verifyLm() {
  const dir = "models/tiny-lm";
  const cfg = readJson(`${dir}/config.json`);
  const tok = tokenizer(dir);
  const ref = readJson(`${dir}/eval-reference.json`);
  const [model, untapped, head] = await Promise.all(
    ["model", "model_untapped", "lm_head"].map((n) => session(`${dir}/onnx/${n}.onnx`)),
  );
  const L = cfg.num_hidden_layers;
  check(
    model.outputNames.filter((n) => n.startsWith("attentions.") || n.startsWith("hidden_states.")).length === 2 * L + 1,
    `tiny-lm outputs: ${model.outputNames.join(" ")}`,
  );
  check(untapped.outputNames.length === 1 + 2 * L, "tiny-lm untapped: logits + present only");
  const run = (sess, ids) => {
    const first = (past, total) =>
      sess.run({
        input_ids: i64(ids, [1, ids.length]),
        attention_mask: i64(Array(total).fill(1), [1, total]),
        position_ids: i64([...Array(ids.length).keys()], [1, ids.length]),
        ...past,
      });
    const step = (next, past, total) =>
      sess.run({
        input_ids: i64([next], [1, 1]),
        attention_mask: i64(Array(total).fill(1), [1, total]),
        position_ids: i64([total - 1], [1, 1]),
        ...past,
      });
    return greedy(cfg, first, step, ids, ref.decoding.max_new_tokens, cfg.eos_token_id);
  };
  const cases = readJsonl("public/demo/tiny-lm.jsonl");
  let same = 0;
  let worstRow = 0;
  let worstLens = 0;
  for (const [k, c] of cases.entries()) {
    const res = await run(model, tok.encode(c.input.prompt));
    const answer = tok.decode(res.ids);
    if (answer === ref.answers[c.id]) same++;
    else console.log(`  differs on ${c.id}: onnx "${answer}" vs reference "${ref.answers[c.id]}"`);
    if (k < 10) {
      for (let l = 0; l < L; l++) worstRow = Math.max(worstRow, rowSumError(res.first[`attentions.${l}`]));
      const lens = await head.run({ hidden_states: res.first[`hidden_states.${L}`] });
      worstLens = Math.max(worstLens, maxAbsDiff(lens.logits.data, res.first.logits.data));
      const u = await run(untapped, tok.encode(c.input.prompt));
      check.untappedSame = (check.untappedSame ?? true) && u.ids.join() === res.ids.join();
    }
  }
  check(
    same === cases.length,
    `tiny-lm: ONNX greedy (KV cache) = reference answers on ${same}/${cases.length} demo cases`,
  );
  check(worstRow < 1e-5, `tiny-lm: attention rows sum to 1 (max error ${worstRow.toExponential(2)})`);
  check(worstLens < 1e-4, `tiny-lm: lm_head(hidden_states.${L}) = logits (max abs diff ${worstLens.toExponential(2)})`);
  check(check.untappedSame, "tiny-lm: untapped model generates the same answers");
  return { cases, ref };
}

async function verifyTransformersJs(vlm, lm) {
  const tf = await import("@huggingface/transformers");
  tf.env.allowRemoteModels = false;
  tf.env.allowLocalModels = true;
  tf.env.localModelPath = path.join(ROOT, "models") + "/";
  const processor = await tf.AutoProcessor.from_pretrained("tiny-vlm");
  const model = await tf.AutoModelForImageTextToText.from_pretrained("tiny-vlm", { dtype: "fp32" });
  const sample = [...vlm.pope.filter((_, i) => i % (QUICK ? 60 : 12) === 0), ...vlm.caps.slice(0, QUICK ? 2 : 8)];
  let same = 0;
  for (const c of sample) {
    const image = await tf.RawImage.read(path.join(ROOT, "public/demo", c.input.image));
    const inputs = await processor(image, c.input.prompt);
    const out = await model.generate({ ...inputs, max_new_tokens: vlm.ref.decoding.max_new_tokens, do_sample: false });
    const n = inputs.input_ids.dims[1];
    const text = processor.tokenizer.decode(out.slice(null, [n, null])[0], { skip_special_tokens: true }).trim();
    if (text === vlm.ref.answers[c.id]) same++;
    else console.log(`  transformers.js differs on ${c.id}: "${text}" vs reference "${vlm.ref.answers[c.id]}"`);
  }
  check(
    same === sample.length,
    `transformers.js tiny-vlm (local folder) generate = reference on ${same}/${sample.length}`,
  );
  const direct = await model({
    ...(await processor(
      await tf.RawImage.read(path.join(ROOT, "public/demo", vlm.pope[0].input.image)),
      vlm.pope[0].input.prompt,
    )),
  });
  check(
    "attentions.0" in direct && "hidden_states.0" in direct,
    "transformers.js tiny-vlm forward returns the extra outputs",
  );
  await model.dispose();

  const tok = await tf.AutoTokenizer.from_pretrained("tiny-lm");
  const lmModel = await tf.AutoModelForCausalLM.from_pretrained("tiny-lm", { dtype: "fp32" });
  const lsample = lm.cases.filter((_, i) => i % (QUICK ? 40 : 8) === 0);
  let lsame = 0;
  for (const c of lsample) {
    const inputs = tok(c.input.prompt);
    const out = await lmModel.generate({ ...inputs, max_new_tokens: lm.ref.decoding.max_new_tokens, do_sample: false });
    const n = inputs.input_ids.dims[1];
    const text = tok.decode(out.slice(null, [n, null])[0], { skip_special_tokens: true }).trim();
    if (text === lm.ref.answers[c.id]) lsame++;
    else console.log(`  transformers.js differs on ${c.id}: "${text}" vs reference "${lm.ref.answers[c.id]}"`);
  }
  check(
    lsame === lsample.length,
    `transformers.js tiny-lm (local folder) generate = reference on ${lsame}/${lsample.length}`,
  );
  await lmModel.dispose();
}

const vlm = await verifyVlm();
const lm = await verifyLm();
await verifyTransformersJs(vlm, lm);
console.log(failures ? `${failures} check(s) failed` : "all checks passed");
process.exit(failures ? 1 : 0);

/**
 * A minimal protobuf wire-format reader and writer: just enough to walk an
 * ONNX `ModelProto` field by field and splice new fields in, while every field
 * we do not touch is carried over as its original bytes. Decoding into a
 * schema and re-encoding would silently drop fields an older schema does not
 * know; slicing raw bytes cannot.
 */
import { concatBytes } from "../core/bytes.ts";

/** Protobuf wire types. */
export const WIRE = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 } as const;

/** One top-level field of a message: its number, wire type, and where its bytes lie. */
export interface Field {
  readonly field: number;
  readonly wire: number;
  /** Start of the whole field (tag included) in the message buffer. */
  readonly start: number;
  /** End (exclusive) of the whole field. */
  readonly end: number;
  /** For length-delimited fields: start/end of the payload. */
  readonly valueStart: number;
  readonly valueEnd: number;
  /** For varint fields: the value (as a JS number; exact below 2^53). */
  readonly varint?: number;
}

/** Reads a varint at `pos`; returns its value (exact below 2^53) and the next position. */
export function readVarint(bytes: Uint8Array, pos: number): [value: number, next: number] {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= bytes.length) throw new Error(`protobuf: truncated varint at byte ${pos} of ${bytes.length}`);
    const byte = bytes[pos++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, pos];
    scale *= 128;
  }
  throw new Error(`protobuf: varint longer than 10 bytes at byte ${pos}`);
}

/**
 * Splits a message's bytes into its top-level fields, in order, without
 * decoding their payloads. Throws on bytes that are not a valid message.
 *
 * @example
 * readFields(Uint8Array.of(0x08, 0x07)) // → [{ field: 1, wire: 0, varint: 7, start: 0, end: 2, … }]
 */
export function readFields(bytes: Uint8Array, start = 0, end = bytes.length): Field[] {
  const fields: Field[] = [];
  let pos = start;
  while (pos < end) {
    const fieldStart = pos;
    const [tag, afterTag] = readVarint(bytes, pos);
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    if (field === 0) throw new Error(`protobuf: field number 0 at byte ${fieldStart}: these bytes are not a message`);
    pos = afterTag;
    if (wire === WIRE.varint) {
      const [value, next] = readVarint(bytes, pos);
      fields.push({ field, wire, start: fieldStart, end: next, valueStart: pos, valueEnd: next, varint: value });
      pos = next;
    } else if (wire === WIRE.bytes) {
      const [length, next] = readVarint(bytes, pos);
      const valueEnd = next + length;
      if (valueEnd > end)
        throw new Error(
          `protobuf: field ${field} at byte ${fieldStart} claims ${length} bytes but the message ends first (truncated file?)`,
        );
      fields.push({ field, wire, start: fieldStart, end: valueEnd, valueStart: next, valueEnd });
      pos = valueEnd;
    } else if (wire === WIRE.fixed64 || wire === WIRE.fixed32) {
      const size = wire === WIRE.fixed64 ? 8 : 4;
      if (pos + size > end) throw new Error(`protobuf: truncated fixed field ${field} at byte ${fieldStart}`);
      fields.push({ field, wire, start: fieldStart, end: pos + size, valueStart: pos, valueEnd: pos + size });
      pos += size;
    } else {
      throw new Error(
        `protobuf: unsupported wire type ${wire} for field ${field} at byte ${fieldStart}: not a protobuf message`,
      );
    }
  }
  if (pos !== end) throw new Error(`protobuf: message overruns its end (${pos} > ${end})`);
  return fields;
}

/**
 * Reads a varint at `pos` as a signed 64-bit integer (two's complement, as
 * protobuf stores negative `int64` values such as an ONNX `axis` of -1).
 */
export function readSignedVarint(bytes: Uint8Array, pos: number): [value: number, next: number] {
  let value = 0n;
  let shift = 0n;
  for (let i = 0; i < 10; i++) {
    if (pos >= bytes.length) throw new Error(`protobuf: truncated varint at byte ${pos} of ${bytes.length}`);
    const byte = bytes[pos++]!;
    value |= BigInt(byte & 0x7f) << shift;
    if (byte < 0x80) return [Number(BigInt.asIntN(64, value)), pos];
    shift += 7n;
  }
  throw new Error(`protobuf: varint longer than 10 bytes at byte ${pos}`);
}

/** The payload of a length-delimited field (a view, not a copy). */
export function payload(bytes: Uint8Array, f: Field): Uint8Array {
  return bytes.subarray(f.valueStart, f.valueEnd);
}

/** The payload of a length-delimited field decoded as UTF-8. */
export function fieldString(bytes: Uint8Array, f: Field): string {
  return new TextDecoder().decode(payload(bytes, f));
}

/** Encodes a non-negative integer (below 2^53) as a varint. */
export function encodeVarint(value: number): Uint8Array {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`protobuf: cannot encode ${value} as a varint`);
  const out: number[] = [];
  let v = value;
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Uint8Array.from(out);
}

export { concatBytes };

/** A length-delimited field: tag, length, payload. */
export function bytesField(field: number, value: Uint8Array): Uint8Array {
  return concatBytes([encodeVarint(field * 8 + WIRE.bytes), encodeVarint(value.length), value]);
}

/** A string field. */
export function stringField(field: number, value: string): Uint8Array {
  return bytesField(field, new TextEncoder().encode(value));
}

/** A varint field (non-negative values only). */
export function varintField(field: number, value: number): Uint8Array {
  return concatBytes([encodeVarint(field * 8 + WIRE.varint), encodeVarint(value)]);
}

/**
 * Encodes a signed integer as protobuf stores an `int64`: negative values as
 * their 64-bit two's complement (ten bytes), as an ONNX `axis` of -1 is stored.
 *
 * @example
 * encodeSignedVarint(-1) // → Uint8Array [255, 255, 255, 255, 255, 255, 255, 255, 255, 1]
 */
export function encodeSignedVarint(value: number): Uint8Array {
  if (!Number.isSafeInteger(value)) throw new Error(`protobuf: cannot encode ${value} as an int64`);
  if (value >= 0) return encodeVarint(value);
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Uint8Array.from(out);
}

/** An `int64` field (any sign). */
export function int64Field(field: number, value: number): Uint8Array {
  return concatBytes([encodeVarint(field * 8 + WIRE.varint), encodeSignedVarint(value)]);
}

/** A `float` field (fixed 32 bits, little-endian). */
export function floatField(field: number, value: number): Uint8Array {
  const out = new Uint8Array(5);
  out.set(encodeVarint(field * 8 + WIRE.fixed32), 0);
  new DataView(out.buffer).setFloat32(1, value, true);
  return out;
}

/** Reads a `float` (fixed32) field's value. */
export function fieldFloat(bytes: Uint8Array, f: Field): number {
  return new DataView(bytes.buffer, bytes.byteOffset + f.valueStart, 4).getFloat32(0, true);
}

/**
 * The integers of a repeated `int64` field, whether written packed (one
 * length-delimited field) or as one varint field per value: protobuf readers
 * must accept both.
 */
export function repeatedInt64(bytes: Uint8Array, fields: readonly Field[]): number[] {
  const out: number[] = [];
  for (const f of fields) {
    if (f.wire === WIRE.varint) out.push(readSignedVarint(bytes, f.valueStart)[0]);
    else if (f.wire === WIRE.bytes) {
      let pos = f.valueStart;
      while (pos < f.valueEnd) {
        const [value, next] = readSignedVarint(bytes, pos);
        out.push(value);
        pos = next;
      }
    }
  }
  return out;
}

/** The floats of a repeated `float` field, packed or not. */
export function repeatedFloat(bytes: Uint8Array, fields: readonly Field[]): number[] {
  const out: number[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  for (const f of fields) {
    if (f.wire === WIRE.fixed32) out.push(view.getFloat32(f.valueStart, true));
    else if (f.wire === WIRE.bytes)
      for (let pos = f.valueStart; pos + 4 <= f.valueEnd; pos += 4) out.push(view.getFloat32(pos, true));
  }
  return out;
}

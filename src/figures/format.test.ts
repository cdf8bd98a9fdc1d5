import { describe, expect, it } from "vitest";
import { bytes, count, decimal, duration, eValue, percent, points, pValue, shareInterval } from "./format.ts";

describe("format", () => {
  it("writes each kind of number one way", () => {
    expect(percent(0.8754)).toBe("87.5%");
    expect(points(-0.0312)).toBe("−3.1 pts");
    expect(points(0.05)).toBe("+5.0 pts");
    expect(pValue(0.00004)).toBe("< 0.001");
    expect(pValue(0.125)).toBe("0.125");
    expect(decimal(0.123456)).toBe("0.123");
    expect(count(100000)).toBe("100,000");
    expect(eValue(1234.5)).toBe("1.2e+3");
    expect(eValue(3.14159)).toBe("3.14");
    expect(shareInterval(0.81, 0.9)).toBe("[81.0%, 90.0%]");
    expect(bytes(3_500_000)).toBe("3.3 MB");
    expect(bytes(512)).toBe("512 B");
    expect(duration(95_000)).toBe("1 min 35 s");
    expect(duration(420)).toBe("420 ms");
    expect(duration(4200)).toBe("4.2 s");
  });

  it("writes a value that is not a finite number as a dash, never as 0 or NaN", () => {
    for (const f of [percent, points, pValue, decimal, count, eValue, bytes, duration]) {
      expect(f(Number.NaN)).toBe("—");
      expect(f(Infinity)).toBe("—");
      expect(f(undefined)).toBe("—");
    }
  });
});

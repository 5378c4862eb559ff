// Demo data: the deterministic random source (one independent stream per area) and ascending ids.

export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
export function hex32(n: number): string {
  return HEX[n >>> 24] + HEX[(n >>> 16) & 255] + HEX[(n >>> 8) & 255] + HEX[n & 255];
}

/** mulberry32: tiny, fast and good enough for demo data. */
export class Rng {
  private a: number;
  constructor(seed: number) {
    this.a = seed >>> 0;
  }
  u32(): number {
    this.a = (this.a + 0x6d2b79f5) | 0;
    let t = this.a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  next(): number {
    return this.u32() / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(arr: readonly T[]): T {
    return arr[Math.floor(this.next() * arr.length)];
  }
  sample<T>(arr: readonly T[], k: number): T[] {
    const copy = arr.slice();
    const out: T[] = [];
    for (let i = 0; i < k && copy.length > 0; i++) out.push(copy.splice(Math.floor(this.next() * copy.length), 1)[0]);
    return out;
  }
  /** A random (version 4 shaped) uuid drawn from this stream. */
  uuid(): string {
    const a = this.u32();
    const b = hex32(((this.u32() & 0xffff0fff) | 0x4000) >>> 0);
    const c = hex32(((this.u32() & 0x3fffffff) | 0x80000000) >>> 0);
    const d = this.u32();
    return `${hex32(a)}-${b.slice(0, 4)}-${b.slice(4)}-${c.slice(0, 4)}-${c.slice(4)}${hex32(d)}`;
  }
}

/** Ascending ids for the big tables: appends to the primary-key btree instead of splitting random pages. */
export class SeqIds {
  private readonly prefix: string;
  private n = 0;
  constructor(rng: Rng) {
    this.prefix = rng.uuid().slice(0, 24);
  }
  next(): string {
    this.n++;
    const h = this.n.toString(16);
    return this.prefix + '000000000000'.slice(h.length) + h;
  }
}

// An automation workflow as a layered graph, laid out by hand for the SVG diagram: actions in layers
// by their longest path from Start (back edges of loops set aside first), ordered inside a layer by
// the mean position of their parents, and each arrow with its label (next, on error, a Case branch).
// No DOM here, so the layout is tested on its own.

export type Action = Record<string, unknown>;

export interface FlowNode {
  name: string;
  type: string;
  /** A sub-workflow the action runs (Loop, Reduce, ExecuteSubWorkflow). */
  runs: string | null;
  layer: number;
  x: number;
  y: number;
}

export interface FlowEdge {
  from: string;
  to: string;
  kind: 'next' | 'nextOnError' | 'nextActions';
  label: string;
  /** Goes back up (a loop in the workflow): drawn around the side. */
  back: boolean;
  /** SVG path and where its label sits. */
  d: string;
  lx: number;
  ly: number;
}

export interface FlowLayout {
  nodes: FlowNode[];
  edges: FlowEdge[];
  width: number;
  height: number;
  /** References to actions the workflow does not have (drawn as a warning, not as arrows). */
  dangling: { from: string; to: string; kind: FlowEdge['kind'] }[];
}

export const BOX_W = 168;
export const BOX_H = 52;
const GAP_X = 36;
const GAP_Y = 56;
const MARGIN = 16;
/** Room on the right for back edges and their labels. */
const SIDE = 72;

/** Case-insensitive field read (the platform matches JSON names without regard to case). */
export function field(a: Action, name: string): unknown {
  if (Object.hasOwn(a, name)) return a[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(a)) if (k.toLowerCase() === lower) return a[k];
  return undefined;
}

/** The platform's `actionType`, or Atrium's earlier `type`. */
export const actionTypeOf = (a: Action): string => String(field(a, 'actionType') ?? field(a, 'type') ?? '?');

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Where an action may go on to, each with the arrow's kind and label. */
export function successors(a: Action): { to: string; kind: FlowEdge['kind']; label: string }[] {
  const out: { to: string; kind: FlowEdge['kind']; label: string }[] = [];
  const next = field(a, 'next');
  if (typeof next === 'string' && next) out.push({ to: next, kind: 'next', label: 'next' });
  const branches = field(a, 'nextActions');
  if (Array.isArray(branches))
    for (const b of branches) {
      if (!isObject(b)) continue;
      const to = field(b, 'name');
      if (typeof to !== 'string' || !to) continue;
      const value = field(b, 'value');
      const label = field(b, 'default') === true ? 'default' : `= ${typeof value === 'string' ? JSON.stringify(value) : String(value ?? '')}`;
      out.push({ to, kind: 'nextActions', label: label.length > 22 ? `${label.slice(0, 21)}…` : label });
    }
  const onError = field(a, 'nextOnError');
  if (typeof onError === 'string' && onError) out.push({ to: onError, kind: 'nextOnError', label: 'on error' });
  return out;
}

export function layoutWorkflow(actions: Action[]): FlowLayout {
  const list = actions.filter(isObject);
  const names = list.map((a, i) => (typeof field(a, 'name') === 'string' && field(a, 'name') ? String(field(a, 'name')) : `#${i + 1}`));
  const index = new Map<string, number>();
  names.forEach((n, i) => {
    if (!index.has(n)) index.set(n, i);
  });
  const out: number[][] = list.map(() => []);
  const raw: { from: number; to: number; kind: FlowEdge['kind']; label: string }[] = [];
  const dangling: FlowLayout['dangling'] = [];
  list.forEach((a, i) => {
    for (const s of successors(a)) {
      const t = index.get(s.to);
      if (t === undefined) dangling.push({ from: names[i], to: s.to, kind: s.kind });
      else {
        raw.push({ from: i, to: t, kind: s.kind, label: s.label });
        out[i].push(t);
      }
    }
  });
  // Back edges: those closing a cycle in a depth-first walk from Start (then from any action left).
  const back = new Set<string>();
  const state = new Uint8Array(list.length); // 0 new, 1 on the stack, 2 done
  const start = list.findIndex((a) => actionTypeOf(a) === 'Start');
  const roots = [start >= 0 ? start : 0, ...list.keys()];
  for (const root of roots) {
    if (list.length === 0 || state[root]) continue;
    // Iterative, so a long chain cannot overflow the stack.
    const stack: [number, number][] = [[root, 0]];
    state[root] = 1;
    while (stack.length) {
      const top = stack[stack.length - 1];
      const [n, k] = top;
      if (k < out[n].length) {
        top[1]++;
        const t = out[n][k];
        if (state[t] === 1) back.add(`${n}>${t}`);
        else if (state[t] === 0) {
          state[t] = 1;
          stack.push([t, 0]);
        }
      } else {
        state[n] = 2;
        stack.pop();
      }
    }
  }
  // Layers: longest path over the forward edges (a topological order by Kahn's algorithm).
  const indegree = new Array<number>(list.length).fill(0);
  const forward: number[][] = list.map(() => []);
  for (const e of raw)
    if (!back.has(`${e.from}>${e.to}`) && e.from !== e.to) {
      forward[e.from].push(e.to);
      indegree[e.to]++;
    }
  const layer = new Array<number>(list.length).fill(0);
  const queue = list.map((_, i) => i).filter((i) => indegree[i] === 0);
  // Start first, so it is the top of the diagram.
  queue.sort((a, b) => (a === start ? -1 : b === start ? 1 : a - b));
  for (let q = 0; q < queue.length; q++) {
    const n = queue[q];
    for (const t of forward[n]) {
      layer[t] = Math.max(layer[t], layer[n] + 1);
      if (--indegree[t] === 0) queue.push(t);
    }
  }
  const layers: number[][] = [];
  list.forEach((_, i) => {
    layers[layer[i]] ??= [];
    layers[layer[i]].push(i);
  });
  // Order inside a layer: the mean position of the parents in the layer above (one sweep down).
  const pos = new Array<number>(list.length).fill(0);
  const parents: number[][] = list.map(() => []);
  for (const [from, ts] of forward.entries()) for (const t of ts) parents[t].push(from);
  for (const row of layers) {
    if (!row) continue;
    const key = (i: number) => (parents[i].length ? parents[i].reduce((s, p) => s + pos[p], 0) / parents[i].length : i);
    row.sort((a, b) => key(a) - key(b) || a - b);
    row.forEach((n, i) => {
      pos[n] = i;
    });
  }
  const widest = Math.max(1, ...layers.map((r) => r?.length ?? 0));
  const inner = widest * BOX_W + (widest - 1) * GAP_X;
  const nodes: FlowNode[] = list.map((a, i) => {
    const row = layers[layer[i]];
    const rowWidth = row.length * BOX_W + (row.length - 1) * GAP_X;
    const runs = field(a, 'subWorkflow');
    return {
      name: names[i],
      type: actionTypeOf(a),
      runs: typeof runs === 'string' && runs ? runs : null,
      layer: layer[i],
      x: MARGIN + (inner - rowWidth) / 2 + pos[i] * (BOX_W + GAP_X),
      y: MARGIN + layer[i] * (BOX_H + GAP_Y),
    };
  });
  const right = MARGIN + inner;
  let sideLane = 0;
  const edges: FlowEdge[] = raw.map((e) => {
    const a = nodes[e.from];
    const b = nodes[e.to];
    const isBack = back.has(`${e.from}>${e.to}`) || e.from === e.to;
    // Several arrows leaving one box start at spread points of its bottom edge.
    const siblings = raw.filter((r) => r.from === e.from);
    const k = siblings.indexOf(e);
    const sx = a.x + (BOX_W * (k + 1)) / (siblings.length + 1);
    if (isBack) {
      // Out of the source's right side, along a lane right of every box, into the target's right side.
      const lane = right + 16 + (sideLane++ % 3) * 16;
      const y1 = a.y + BOX_H / 2;
      const y2 = b.y + BOX_H / 2 + 8;
      const d = `M${a.x + BOX_W},${y1} H${lane} V${y2} H${b.x + BOX_W + 2}`;
      return { from: a.name, to: b.name, kind: e.kind, label: e.label, back: true, d, lx: lane, ly: (y1 + y2) / 2 };
    }
    const sy = a.y + BOX_H;
    const tx = b.x + BOX_W / 2;
    const ty = b.y - 2;
    const mid = (sy + ty) / 2;
    const d = `M${sx},${sy} C${sx},${mid} ${tx},${mid} ${tx},${ty}`;
    // A long arrow (skipping layers) has its label near its start, clear of the boxes it passes.
    const skips = b.layer - a.layer > 1;
    return {
      from: a.name,
      to: b.name,
      kind: e.kind,
      label: e.label,
      back: false,
      d,
      lx: skips ? sx : (sx + tx) / 2,
      ly: skips ? sy + GAP_Y / 2 : mid,
    };
  });
  return {
    nodes,
    edges,
    dangling,
    width: right + MARGIN + (back.size || raw.some((e) => e.from === e.to) ? SIDE : 0),
    height: MARGIN * 2 + Math.max(1, layers.length) * (BOX_H + GAP_Y) - GAP_Y,
  };
}

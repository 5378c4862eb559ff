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
/** At most this many pass-through slots for arrows that span layers. */
const MAX_SLOTS = 20_000;
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
  // A forward arrow that spans several layers passes through a slot (a dummy) in each layer between,
  // so that it is routed beside the boxes of those layers rather than through them.
  const slotW = 20;
  let count = list.length;
  const widthOf = (i: number) => (i < list.length ? BOX_W : slotW);
  const layerOf: number[] = [...layer];
  const down: number[][] = list.map(() => []);
  const via = new Map<(typeof raw)[number], number[]>();
  // A definition is bounded (1,000 actions), but its arrows times its layers need not be: past this many
  // slots, long arrows are drawn straight rather than routed.
  const span = raw.reduce((n, e) => n + Math.max(0, layer[e.to] - layer[e.from] - 1), 0);
  const route = span <= MAX_SLOTS;
  for (const e of raw) {
    if (back.has(`${e.from}>${e.to}`) || e.from === e.to || !route) continue;
    const chain: number[] = [];
    let prev = e.from;
    for (let l = layer[e.from] + 1; l < layer[e.to]; l++) {
      const d = count++;
      layerOf[d] = l;
      down[d] = [];
      down[prev].push(d);
      chain.push(d);
      prev = d;
    }
    down[prev].push(e.to);
    via.set(e, chain);
  }
  const up: number[][] = Array.from({ length: count }, () => []);
  for (const [from, ts] of down.entries()) for (const t of ts) up[t].push(from);
  const layers: number[][] = [];
  for (let i = 0; i < count; i++) {
    layers[layerOf[i]] ??= [];
    layers[layerOf[i]].push(i);
  }
  // Order inside a layer: the mean position of the neighbours in the layer above, then below, then above
  // again (barycentre sweeps), which keeps branches apart and arrows short.
  const pos = new Array<number>(count).fill(0);
  const place = (row: number[]) => {
    for (const [i, n] of row.entries()) pos[n] = i;
  };
  for (const row of layers) if (row) place(row);
  const sweep = (rows: number[][], neighbours: number[][]) => {
    for (const row of rows) {
      if (!row) continue;
      const key = new Map(row.map((i) => [i, neighbours[i].length ? neighbours[i].reduce((s, p) => s + pos[p], 0) / neighbours[i].length : pos[i]]));
      row.sort((a, b) => (key.get(a) as number) - (key.get(b) as number) || pos[a] - pos[b]);
      place(row);
    }
  };
  sweep(layers, up);
  sweep([...layers].reverse(), down);
  sweep(layers, up);
  const rowWidth = (row: number[]) => row.reduce((w, i) => w + widthOf(i), 0) + (row.length - 1) * GAP_X;
  const inner = Math.max(BOX_W, ...layers.map((r) => (r ? rowWidth(r) : 0)));
  const xs = new Array<number>(count).fill(0);
  for (const row of layers) {
    if (!row) continue;
    let x = MARGIN + (inner - rowWidth(row)) / 2;
    for (const i of row) {
      xs[i] = x;
      x += widthOf(i) + GAP_X;
    }
  }
  const top = (l: number) => MARGIN + l * (BOX_H + GAP_Y);
  const nodes: FlowNode[] = list.map((a, i) => {
    const runs = field(a, 'subWorkflow');
    return {
      name: names[i],
      type: actionTypeOf(a),
      runs: typeof runs === 'string' && runs ? runs : null,
      layer: layer[i],
      x: xs[i],
      y: top(layer[i]),
    };
  });
  const right = MARGIN + inner;
  const forwardEdges = raw.filter((r) => !(back.has(`${r.from}>${r.to}`) || r.from === r.to));
  let sideLane = 0;
  const edges: FlowEdge[] = raw.map((e) => {
    const a = nodes[e.from];
    const b = nodes[e.to];
    const isBack = back.has(`${e.from}>${e.to}`) || e.from === e.to;
    // Several arrows leaving one box start at spread points of its bottom edge.
    const siblings = forwardEdges.filter((r) => r.from === e.from);
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
    // Down through the slots between, then into the top of the target.
    const points: [number, number][] = [[sx, a.y + BOX_H]];
    for (const d of via.get(e) ?? []) {
      const cx = xs[d] + slotW / 2;
      points.push([cx, top(layerOf[d])], [cx, top(layerOf[d]) + BOX_H]);
    }
    // Several arrows into one box end at spread points of its top edge.
    const incoming = forwardEdges.filter((r) => r.to === e.to);
    points.push([b.x + (BOX_W * (incoming.indexOf(e) + 1)) / (incoming.length + 1), b.y - 2]);
    let d = `M${points[0][0]},${points[0][1]}`;
    for (let i = 1; i < points.length; i++) {
      const [x0, y0] = points[i - 1];
      const [x1, y1] = points[i];
      if (x0 === x1) d += ` L${x1},${y1}`;
      else {
        const mid = (y0 + y1) / 2;
        d += ` C${x0},${mid} ${x1},${mid} ${x1},${y1}`;
      }
    }
    const [x0, y0] = points[0];
    const [x1, y1] = points[1];
    // One arrow: its label halfway. Branches of one box: each label just below its own start point,
    // every other one lower, so that neighbouring labels do not cover each other.
    const label = siblings.length > 1 ? { lx: x0, ly: y0 + 13 + (k % 2) * 19 } : { lx: (x0 + x1) / 2, ly: (y0 + y1) / 2 };
    return { from: a.name, to: b.name, kind: e.kind, label: e.label, back: false, d, ...label };
  });
  return {
    nodes,
    edges,
    dangling,
    width: right + MARGIN + (back.size || raw.some((e) => e.from === e.to) ? SIDE : 0),
    height: MARGIN * 2 + Math.max(1, layers.length) * (BOX_H + GAP_Y) - GAP_Y,
  };
}

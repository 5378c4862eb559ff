// A virtualised grid over a row count the server gave: only the rows in view are in the page, and
// the pages of rows they fall in are fetched (and kept) as the user scrolls.
import { useEffect, useRef, useState } from 'preact/hooks';

export const PAGE_SIZE = 100;
const ROW_HEIGHT = 30;
const VIEW_ROWS = 16;
const OVERSCAN = 10;

export interface VirtualTableProps {
  columns: string[];
  total: number;
  /** Rows of page `page` (PAGE_SIZE rows from page * PAGE_SIZE). */
  fetchPage: (page: number) => Promise<Record<string, unknown>[]>;
  /** The first page, already fetched with the count. */
  firstPage: Record<string, unknown>[];
  label: string;
  /** Server-side order: the header of `sort.field` shows its direction; a click on a header asks onSort. */
  sort?: { field: string; direction: 'asc' | 'desc' } | null;
  onSort?: (field: string) => void;
  /** Widths in pixels by column (default DEFAULT_WIDTH); a header's handle (drag, or arrow keys) asks onResize. */
  widths?: Record<string, number>;
  onResize?: (column: string, width: number) => void;
  /** A column's id column (Client -> ClientId): its value is shown on hover of the name. */
  idOf?: Record<string, string>;
}

export const DEFAULT_WIDTH = 224;
export const MIN_WIDTH = 60;
export const MAX_WIDTH = 800;
const clampWidth = (w: number) => Math.round(Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, w)));

const show = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

export function VirtualTable({ columns, total, fetchPage, firstPage, label, sort, onSort, widths = {}, onResize, idOf = {} }: VirtualTableProps) {
  const pages = useRef(new Map<number, Record<string, unknown>[]>([[0, firstPage]]));
  const pending = useRef(new Set<number>());
  const [, setVersion] = useState(0);
  const [scrollTop, setScrollTop] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(total, Math.ceil(scrollTop / ROW_HEIGHT) + VIEW_ROWS + OVERSCAN);

  useEffect(() => {
    for (let page = Math.floor(first / PAGE_SIZE); page * PAGE_SIZE < last; page++) {
      if (pages.current.has(page) || pending.current.has(page)) continue;
      pending.current.add(page);
      fetchPage(page).then(
        (rows) => {
          pages.current.set(page, rows);
          pending.current.delete(page);
          setVersion((v) => v + 1);
        },
        (e: Error) => {
          pending.current.delete(page);
          setError(e.message);
        },
      );
    }
  }, [first, last, fetchPage]);

  // Fixed widths: the header and each positioned row are separate grids that must line up.
  const template = columns.map((c) => `${widths[c] ?? DEFAULT_WIDTH}px`).join(' ');
  const hover = (row: Record<string, unknown>, c: string) =>
    idOf[c] && row[idOf[c]] != null ? `${show(row[c])} (${idOf[c]} ${show(row[idOf[c]])})` : show(row[c]);
  const rows = [];
  for (let i = first; i < last; i++) {
    const row = pages.current.get(Math.floor(i / PAGE_SIZE))?.[i % PAGE_SIZE];
    rows.push(
      <tr aria-rowindex={i + 2} class="vrow" key={i} style={{ transform: `translateY(${i * ROW_HEIGHT}px)`, gridTemplateColumns: template }}>
        {columns.map((c) => (
          <td key={c} title={row ? hover(row, c) : ''}>
            {row ? show(row[c]) : '…'}
          </td>
        ))}
      </tr>,
    );
  }
  return (
    <div>
      {error ? (
        <div class="error" role="alert">
          {error}
        </div>
      ) : null}
      <section
        class="vtable"
        aria-label={label}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus for keyboard users to scroll it
        tabIndex={0}
        style={{ height: `${(VIEW_ROWS + 1) * ROW_HEIGHT + 2}px` }}
        onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
      >
        <table aria-rowcount={total + 1}>
          <thead>
            <tr aria-rowindex={1} class="vhead" style={{ gridTemplateColumns: template }}>
              {columns.map((c) => (
                <HeaderCell
                  key={c}
                  column={c}
                  width={widths[c] ?? DEFAULT_WIDTH}
                  sort={sort?.field === c ? sort.direction : null}
                  onSort={onSort}
                  onResize={onResize}
                />
              ))}
            </tr>
          </thead>
          <tbody class="vbody" style={{ height: `${total * ROW_HEIGHT}px` }}>
            {rows}
          </tbody>
        </table>
      </section>
    </div>
  );
}

function HeaderCell(props: {
  column: string;
  width: number;
  sort: 'asc' | 'desc' | null;
  onSort?: (field: string) => void;
  onResize?: (column: string, width: number) => void;
}) {
  const { column, width, sort, onSort, onResize } = props;
  const drag = (e: PointerEvent) => {
    if (!onResize) return;
    e.preventDefault();
    const startX = e.clientX;
    const move = (m: PointerEvent) => onResize(column, clampWidth(width + m.clientX - startX));
    const up = () => {
      removeEventListener('pointermove', move);
      removeEventListener('pointerup', up);
    };
    addEventListener('pointermove', move);
    addEventListener('pointerup', up);
  };
  const keys = (e: KeyboardEvent) => {
    if (!onResize || (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight')) return;
    e.preventDefault();
    onResize(column, clampWidth(width + (e.key === 'ArrowRight' ? 16 : -16)));
  };
  return (
    <th scope="col" aria-sort={sort === 'asc' ? 'ascending' : sort === 'desc' ? 'descending' : undefined}>
      {onSort ? (
        <button type="button" class="sort" onClick={() => onSort(column)} title={`Sort by ${column}`}>
          {column}
          <span aria-hidden="true">{sort === 'asc' ? ' ▲' : sort === 'desc' ? ' ▼' : ''}</span>
        </button>
      ) : (
        column
      )}
      {onResize ? (
        // biome-ignore lint/a11y/useSemanticElements: a column's width handle is a focusable separator (WAI-ARIA's window splitter), not an <hr>
        <span
          class="resize"
          role="separator"
          aria-orientation="vertical"
          aria-label={`Width of ${column}`}
          aria-valuenow={width}
          aria-valuemin={MIN_WIDTH}
          aria-valuemax={MAX_WIDTH}
          tabIndex={0}
          onPointerDown={drag}
          onKeyDown={keys}
        />
      ) : null}
    </th>
  );
}

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
}

const show = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

export function VirtualTable({ columns, total, fetchPage, firstPage, label }: VirtualTableProps) {
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

  // One fixed width for every column: the header and each positioned row are separate grids that must line up.
  const template = `repeat(${columns.length}, 14rem)`;
  const rows = [];
  for (let i = first; i < last; i++) {
    const row = pages.current.get(Math.floor(i / PAGE_SIZE))?.[i % PAGE_SIZE];
    rows.push(
      <tr aria-rowindex={i + 2} class="vrow" key={i} style={{ transform: `translateY(${i * ROW_HEIGHT}px)`, gridTemplateColumns: template }}>
        {columns.map((c) => (
          <td key={c} title={row ? show(row[c]) : ''}>
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
                <th scope="col" key={c}>
                  {c}
                </th>
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

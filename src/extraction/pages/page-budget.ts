// Bounds the rows of JSON pages a server computes at once (decision 0035). A page's rows are strings in
// V8's heap until it is sent, and the server runs with a capped old space (npm start) so that memory
// taken by a burst of large pages is given back: the cap is only safe if pages cannot pile up under it.
import type { AppContext } from '../../platform/context.ts';
import { MAX_PAGE_SIZE } from '../query/query-builder.ts';

/**
 * Rows of pages in flight at once: two pages of the maximum size. A DE-TimeSheets row (38 fields, the
 * widest common page) is about 1.4 KB of JSON, held as its string and its Buffer: ~60 MB at this bound,
 * under half the 128 MB old space `npm start` gives the server.
 */
export const MAX_PAGE_ROWS_IN_FLIGHT = 2 * MAX_PAGE_SIZE;

/** The rows a page body may answer: its take, else the maximum page size (the default for pages). */
export function pageRowsOf(body: { queryBuilder?: { take?: unknown } | null } | undefined): number {
  const take = body?.queryBuilder?.take;
  return typeof take === 'number' && Number.isSafeInteger(take) && take >= 0 ? Math.min(take, MAX_PAGE_SIZE) : MAX_PAGE_SIZE;
}

/** The rows of pages one server computes at once, and the pages waiting their turn (FIFO). */
export class PageBudget {
  #inFlight = 0;
  readonly #waiting: { rows: number; start: () => void }[] = [];

  #admit(): void {
    // In order: a large page waiting at the head is not overtaken forever by small ones.
    while (this.#waiting.length > 0 && (this.#inFlight === 0 || this.#inFlight + this.#waiting[0].rows <= MAX_PAGE_ROWS_IN_FLIGHT)) {
      const next = this.#waiting.shift() as { rows: number; start: () => void };
      this.#inFlight += next.rows;
      next.start();
    }
  }

  /** Runs `work` once the rows it may answer fit in the budget (a page alone always fits); FIFO. */
  async run<T>(rows: number, work: () => Promise<T>): Promise<T> {
    await new Promise<void>((start) => {
      this.#waiting.push({ rows, start });
      this.#admit();
    });
    try {
      return await work();
    } finally {
      this.#inFlight -= rows;
      this.#admit();
    }
  }

  /** Rows admitted now (for tests). */
  inFlight(): number {
    return this.#inFlight;
  }
}

const budgets = new WeakMap<AppContext, PageBudget>();

/** The page budget of a server (its AppContext): two servers in one process never share one. */
export function pageBudgetOf(ctx: AppContext): PageBudget {
  let b = budgets.get(ctx);
  if (!b) {
    b = new PageBudget();
    budgets.set(ctx, b);
  }
  return b;
}

// `COPY … TO STDOUT` as a stream of its rows' bytes, read off the connection's socket (decision 0040). It does
// what pg-copy-streams' `to` does, but strips the protocol framing in place in each socket chunk and hands on a
// view of it: pg-copy-streams joins its message slices into new Buffers, and the volume of new Buffers kept V8
// collecting its whole heap every 64 MB of rows.
import assert from 'node:assert';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';

/**
 * How each stage of an export buffers. Three processes share the CPUs (PostgreSQL, the server, the client); with
 * streams' default 64 KiB each stage stalls the one before it every few rows, and the server sat idle 80 % of a
 * 1M-row export (decision 0035): a stage holds 16 chunks (a socket's chunks are 64 KiB at most, so about a
 * megabyte), so PostgreSQL keeps writing while the client reads. In object mode, so that a stage hands on the
 * chunks it was given: a byte stream joins its buffered chunks into a new Buffer on each read, and every 64 MB
 * of new Buffers costs a full collection of V8's heap (decision 0040).
 */
export const EXPORT_STAGE = { objectMode: true, highWaterMark: 16 } as const;

const COPY_DATA = 0x64; // d
const COPY_DONE = 0x63; // c
const ERROR_RESPONSE = 0x45; // E

/** The parts of pg's Connection this reads: its socket, whose 'data' listener is pg's message parser. */
type OnData = (chunk: Buffer) => void;
interface PgConnection {
  stream: Socket;
  query(text: string): void;
}

export class CopyOut extends Readable {
  readonly text: string;
  rowCount = 0;
  #connection: PgConnection | null = null;
  #pgOnData: OnData | null = null;
  readonly #onData = (chunk: Buffer) => this.#parse(chunk);
  #paused = false;
  /** A message's first bytes when a chunk ended inside its five-byte header. */
  readonly #header = Buffer.alloc(5);
  #headerBytes = 0;
  /** The message being read: its type, and how many of its body's bytes are still to come. */
  #code = 0;
  #left = 0;

  constructor(text: string) {
    super(EXPORT_STAGE);
    this.text = text;
  }

  /** Called by pg's client.query: takes the socket's chunks over from pg's parser until the COPY is done. */
  submit(connection: PgConnection): void {
    this.#connection = connection;
    const listeners = connection.stream.listeners('data') as OnData[];
    assert(listeners.length === 1, 'one data listener (pg) on the connection');
    const onData = listeners[0];
    this.#pgOnData = onData;
    connection.stream.removeListener('data', onData);
    connection.stream.on('data', this.#onData);
    connection.query(this.text);
  }

  override _read(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#connection?.stream.resume();
  }

  /**
   * Strips the framing of `chunk` in place (each message loses its five-byte header, so the rows' bytes never
   * overtake the bytes still to read) and pushes a view of it: no new memory per chunk, whose volume would have
   * V8 run a full collection every 64 MB of rows.
   */
  #parse(chunk: Buffer): void {
    const n = chunk.length;
    let o = 0;
    let p = 0;
    // Also once the chunk is read, to end a message with no body (CopyDone) whose header ended it.
    while (p < n || (this.#code !== 0 && this.#left === 0)) {
      if (this.#left === 0 && this.#code === 0) {
        let start = p;
        if (this.#headerBytes === 0 && p + 5 <= n) {
          this.#code = chunk[p];
          this.#left = chunk.readUInt32BE(p + 1) - 4;
          p += 5;
        } else {
          const take = Math.min(5 - this.#headerBytes, n - p);
          chunk.copy(this.#header, this.#headerBytes, p, p + take);
          this.#headerBytes += take;
          p += take;
          if (this.#headerBytes < 5) break;
          this.#headerBytes = 0;
          this.#code = this.#header[0];
          this.#left = this.#header.readUInt32BE(1) - 4;
          start = -1;
        }
        if (this.#code === ERROR_RESPONSE) {
          // pg reads the error and fails the query (handleError); it gets the message from its first byte.
          this.#emit(chunk, o);
          this.#detach(start === -1 ? Buffer.concat([this.#header, chunk.subarray(p)]) : chunk.subarray(start));
          return;
        }
      }
      const take = Math.min(this.#left, n - p);
      if (this.#code === COPY_DATA && take > 0) {
        if (o !== p) chunk.copy(chunk, o, p, p + take);
        o += take;
      }
      p += take;
      this.#left -= take;
      if (this.#left === 0) {
        const code = this.#code;
        this.#code = 0;
        // CopyOutResponse, CopyData and the messages PostgreSQL may send at any time go on; CopyDone ends it.
        if (code === COPY_DONE) {
          this.#emit(chunk, o);
          this.#detach(chunk.subarray(p));
          this.push(null);
          return;
        }
      }
    }
    if (!this.#emit(chunk, o)) {
      this.#paused = true;
      this.#connection?.stream.pause();
    }
  }

  /** Pushes the rows of a chunk; false when the reader wants no more for now. */
  #emit(chunk: Buffer, end: number): boolean {
    return end > 0 ? this.push(chunk.subarray(0, end)) : true;
  }

  /** Gives the socket back to pg's parser with what is left of the chunk (CommandComplete, ReadyForQuery). */
  #detach(rest: Buffer): void {
    const connection = this.#connection as PgConnection;
    const onData = this.#pgOnData as OnData;
    connection.stream.removeListener('data', this.#onData);
    connection.stream.on('data', onData);
    if (rest.length > 0) onData(rest);
    // Paused while the reader was full, perhaps: pg reads on.
    if (this.#paused) {
      this.#paused = false;
      connection.stream.resume();
    }
  }

  handleError(err: Error): void {
    this.destroy(err);
  }

  handleCommandComplete(msg: { text?: string }): void {
    const match = /COPY (\d+)/.exec(msg?.text ?? '');
    if (match) this.rowCount = Number(match[1]);
  }

  handleReadyForQuery(): void {}
}

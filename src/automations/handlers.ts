// Every action type the engine runs, by the platform's type name: the one list, passed to runs in their
// RunServices (runtime.ts, run-thread.ts); the engine imports no handler. Other surfaces' built-in action
// types (UserFeed) are added per context (runtime.ts, useActionHandlers), never by importing a file.

import { AUTH_HANDLERS } from './actions/auth.ts';
import { DATA_HANDLERS } from './actions/data.ts';
import { EMAIL_HANDLERS } from './actions/email.ts';
import { FILE_HANDLERS } from './actions/files.ts';
import { FLOW_HANDLERS } from './actions/flow.ts';
import { HTTP_HANDLERS } from './actions/http.ts';
import { PDF_HANDLERS } from './actions/pdf.ts';
import { SFTP_HANDLERS } from './actions/sftp.ts';
import { XML_HANDLERS } from './actions/xml.ts';
import type { Handler } from './engine.ts';

export const HANDLERS: Readonly<Record<string, Handler>> = Object.assign(
  Object.create(null),
  FLOW_HANDLERS,
  HTTP_HANDLERS,
  SFTP_HANDLERS,
  DATA_HANDLERS,
  FILE_HANDLERS,
  EMAIL_HANDLERS,
  AUTH_HANDLERS,
  XML_HANDLERS,
  PDF_HANDLERS,
);

/**
 * The engine's own action types: they need nothing of the main thread, so a run made of them can be
 * contained in a worker thread. Other surfaces' types (UserFeed) are not among them.
 */
export const ENGINE_ACTION_TYPES: ReadonlySet<string> = new Set(Object.keys(HANDLERS));

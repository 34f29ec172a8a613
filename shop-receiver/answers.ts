/** What the receiver's routes answer: JSON (an error body is `{error, ...extra}`) or the HTML page. */
import type { Answer } from '../local-http';

export interface ReceiverAnswer extends Answer {
  /** Set for the orders page: sent as text/html instead of JSON. */
  html?: string;
}

export const error = (
  status: number,
  message: string,
  extra: Record<string, unknown> = {},
  headers?: Record<string, string>,
): ReceiverAnswer => ({
  status,
  body: { error: message, ...extra },
  headers,
});

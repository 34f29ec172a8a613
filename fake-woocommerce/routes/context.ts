/** What every route gets: the fake, the matched route, the request's parameters and its permission check. */
import type { Params } from '../params';
import type { Reply } from '../replies';
import type { Matched } from '../router';
import type { WooState } from '../state';

export interface RouteContext {
  state: WooState;
  match: Matched;
  /** The query string merged with the body (the body wins), as WP_REST_Request::get_params. */
  params: Params;
  url: URL;
  /**
   * The route's permission callback: its 401 for an anonymous request, else null. Routes call
   * it after checking their parameters, as WordPress does (a bad parameter is a 400 even then).
   */
  permit(): Reply | null;
}

export type RouteHandler = (ctx: RouteContext) => Reply;

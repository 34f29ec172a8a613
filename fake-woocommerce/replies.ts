/**
 * What the fake sends: WordPress's WP_Error JSON (`{code, message, data:{status}}`) for every
 * error WordPress itself produces, and the HTML pages a host's nginx or CDN sends when it
 * answers in WordPress's place (413, 429, 503, 504), which a client must not parse as JSON.
 */

/** One answer: a JSON body, or an HTML page when `html` is set. */
export interface Reply {
  status: number;
  body?: unknown;
  html?: string;
  headers?: Record<string, string>;
}

export function ok(body: unknown, status = 200, headers?: Record<string, string>): Reply {
  return { status, body, headers };
}

/** A WP_Error as rest_convert_error_to_response writes it; `data` adds to `{status}`. */
export function wpError(status: number, code: string, message: string, data: Record<string, unknown> = {}): Reply {
  return { status, body: { code, message, data: { status, ...data } } };
}

/** WordPress's answer to a path or method no route matches (also every route of a missing plugin). */
export function noRoute(): Reply {
  return wpError(404, 'rest_no_route', 'No route was found matching the URL and request method.');
}

export function invalidJson(): Reply {
  return wpError(400, 'rest_invalid_json', 'Invalid JSON body passed.', { json_error_code: 4, json_error_message: 'Syntax error' });
}

export function missingParams(names: string[]): Reply {
  return wpError(400, 'rest_missing_callback_param', `Missing parameter(s): ${names.join(', ')}`, { params: names });
}

/** One parameter that failed its schema, as rest_validate_value_from_schema words it. */
export interface ParamProblem {
  param: string;
  code: string;
  message: string;
}

/** rest_invalid_param with `params` (message per name) and, as WordPress 5.6+ adds, `details`. */
export function invalidParams(problems: ParamProblem[]): Reply {
  const params: Record<string, string> = {};
  const details: Record<string, unknown> = {};
  for (const p of problems) {
    params[p.param] ??= p.message;
    details[p.param] ??= { code: p.code, message: p.message, data: null };
  }
  return wpError(400, 'rest_invalid_param', `Invalid parameter(s): ${Object.keys(params).join(', ')}`, { params, details });
}

/** What WordPress's fatal-error handler sends to a REST request ("critical error"). */
export function criticalError(): Reply {
  return {
    status: 500,
    body: {
      code: 'internal_server_error',
      message:
        '<p>There has been a critical error on this website.</p><p><a href="https://wordpress.org/documentation/article/faq-troubleshooting/">Learn more about troubleshooting WordPress.</a></p>',
      data: { status: 500 },
      additional_errors: [],
    },
  };
}

const HOST_TITLES: Record<number, string> = {
  404: '404 Not Found',
  413: '413 Request Entity Too Large',
  429: '429 Too Many Requests',
  502: '502 Bad Gateway',
  503: '503 Service Temporarily Unavailable',
  504: '504 Gateway Time-out',
};

/** nginx's built-in error page, byte for byte in shape, as shared hosts and proxies send it. */
export function hostPage(status: number, headers?: Record<string, string>): Reply {
  const title = HOST_TITLES[status] ?? `${status} Error`;
  const html = `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
  return { status, html, headers };
}

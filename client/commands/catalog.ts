/** `npm run cli -- couriers` and `npm run cli -- products <courier>`: what the shipping API offers the account. */
import {
  deadlineFlag,
  EXIT,
  parseCommandArgs,
  println,
  requirePositionals,
  shippingApi,
  shippingApiFailure,
  table,
  type ExitCode,
  type Io,
} from '../cli-support';
import { readPatiently } from '../../order-import/preflight';

const DEADLINE_NOTE = `  --deadline <duration>  A 429 is waited out (its Retry-After), a 5xx backed off (1 s doubling,
                         as the workers do; a line on stderr says so each time) until this
                         long after the start (default 15m); past it, exit 5`;

const ENV_NOTE = `Environment: SHIPPING_API_BASE_URL, SHIPPING_API_KEY, SHIPPING_API_TOKEN.`;
const EXIT_NOTE = `Exit codes: 0 listed; 1 the API refused the request (e.g. unknown courier);
2 usage/configuration error; 5 the shipping API unreachable or credentials refused.`;

export const COURIERS_HELP = `Usage: npm run cli -- couriers [--json] [--deadline <duration>]

Lists the couriers of the account (GET /couriers): the codes import records use in
labelRequest.courier.

${DEADLINE_NOTE}

${ENV_NOTE}
${EXIT_NOTE}
`;

export const PRODUCTS_HELP = `Usage: npm run cli -- products [--json] [--deadline <duration>] <courier>

Lists a courier's shipping products (GET /products): the codes import records use in
labelRequest.service.productCode.

${DEADLINE_NOTE}

${ENV_NOTE}
${EXIT_NOTE}
`;

export async function couriersCommand(argv: string[], io: Io): Promise<ExitCode> {
  return catalogCommand(argv, io, 'couriers');
}

export async function productsCommand(argv: string[], io: Io): Promise<ExitCode> {
  return catalogCommand(argv, io, 'products');
}

async function catalogCommand(argv: string[], io: Io, command: 'couriers' | 'products'): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(argv, {
    json: { type: 'boolean', default: false },
    deadline: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.stdout.write(command === 'couriers' ? COURIERS_HELP : PRODUCTS_HELP);
    return EXIT.ok;
  }
  const [courier] = requirePositionals(positionals, command === 'couriers' ? [] : ['courier'], command);
  const patience = { deadline: Date.now() + deadlineFlag(values.deadline), onWait: (line: string) => println(io.stderr, line) };
  const api = shippingApi(io.env);
  try {
    let list;
    try {
      list =
        courier === undefined
          ? await readPatiently('GET /couriers', () => api.listCouriers(), patience)
          : await readPatiently(`GET /products?courier=${courier}`, () => api.listProducts(courier), patience);
    } catch (err) {
      throw shippingApiFailure(courier === undefined ? 'GET /couriers' : `GET /products for courier ${courier}`, err);
    }
    if (values.json) println(io.stdout, JSON.stringify(courier === undefined ? { couriers: list } : { courier, products: list }, null, 2));
    else if (list.length === 0) println(io.stdout, courier === undefined ? 'No couriers.' : `No products for courier ${courier}.`);
    else println(io.stdout, table([['CODE', 'NAME'], ...list.map((x) => [x.code, x.name])]));
    return EXIT.ok;
  } finally {
    await api.close();
  }
}

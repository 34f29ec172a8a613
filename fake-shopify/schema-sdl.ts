/**
 * The subset of Shopify's Admin GraphQL schema the fake serves, with Shopify's type names,
 * argument names and nullability (checked against shopify.dev, Admin API 2026-10). Anything not
 * here is a genuine validation error, as a field Shopify lacks would be.
 */

/** ISO 3166-1 alpha-2 codes (Shopify's CountryCode enum also has XK and ZZ). */
export const COUNTRY_CODES = `AC AD AE AF AG AI AL AM AN AO AR AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC
CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FO FR GA GB GD GE GF GG GH GI GL GM GN
GP GQ GR GS GT GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT
LU LV LY MA MC MD ME MF MG MK ML MM MN MO MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN
PS PT PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TA TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW
TZ UA UG UM US UY UZ VA VC VE VG VN VU WF WS XK YE YT ZA ZM ZW ZZ`;

/** The CurrencyCode values the fake knows (Shopify's enum has every ISO 4217 code). */
export const CURRENCY_CODES = [
  'AUD',
  'CAD',
  'CHF',
  'CZK',
  'DKK',
  'EUR',
  'GBP',
  'HUF',
  'JPY',
  'NOK',
  'NZD',
  'PLN',
  'RON',
  'SEK',
  'USD',
] as const;

const CONNECTION = (node: string) => `
type ${node}Connection { edges: [${node}Edge!]! nodes: [${node}!]! pageInfo: PageInfo! }
type ${node}Edge { cursor: String! node: ${node}! }`;

const PAGE_ARGS = 'first: Int, after: String, last: Int, before: String, reverse: Boolean = false';

const READ = `
scalar DateTime
scalar URL
scalar UnsignedInt64
scalar Decimal

interface Node { id: ID! }
type UserError { field: [String!] message: String! }
type PageInfo { hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String endCursor: String }

enum CountryCode { ${COUNTRY_CODES} }
enum CurrencyCode { ${CURRENCY_CODES.join(' ')} }
enum OrderDisplayFinancialStatus { AUTHORIZED EXPIRED PAID PARTIALLY_PAID PARTIALLY_REFUNDED PENDING REFUNDED VOIDED }
enum WeightUnit { GRAMS KILOGRAMS OUNCES POUNDS }
enum OrderDisplayFulfillmentStatus { FULFILLED IN_PROGRESS ON_HOLD OPEN PARTIALLY_FULFILLED PENDING_FULFILLMENT REQUEST_DECLINED RESTOCKED SCHEDULED UNFULFILLED }
enum OrderSortKeys { CREATED_AT CURRENT_TOTAL_PRICE CUSTOMER_NAME DESTINATION FINANCIAL_STATUS FULFILLMENT_STATUS ID ORDER_NUMBER PO_NUMBER PROCESSED_AT RELEVANCE TOTAL_ITEMS_QUANTITY TOTAL_PRICE UPDATED_AT }
enum FulfillmentOrderStatus { CANCELLED CLOSED INCOMPLETE IN_PROGRESS ON_HOLD OPEN SCHEDULED }
enum FulfillmentOrderRequestStatus { ACCEPTED CANCELLATION_ACCEPTED CANCELLATION_REJECTED CANCELLATION_REQUESTED CLOSED REJECTED SUBMITTED UNSUBMITTED }
enum DeliveryMethodType { LOCAL NONE PICKUP_POINT PICK_UP RETAIL SHIPPING }
enum FulfillmentStatus { CANCELLED ERROR FAILURE OPEN PENDING SUCCESS }
enum FulfillmentDisplayStatus { ATTEMPTED_DELIVERY CANCELED CARRIER_PICKED_UP CONFIRMED DELAYED DELIVERED FAILURE FULFILLED IN_TRANSIT LABEL_PRINTED LABEL_PURCHASED LABEL_VOIDED MARKED_AS_FULFILLED NOT_DELIVERED OUT_FOR_DELIVERY PICKED_UP READY_FOR_PICKUP SUBMITTED }
enum FulfillmentEventStatus { ATTEMPTED_DELIVERY CARRIER_PICKED_UP CONFIRMED DELAYED DELIVERED FAILURE IN_TRANSIT LABEL_PRINTED LABEL_PURCHASED OUT_FOR_DELIVERY READY_FOR_PICKUP }
enum FulfillmentEventSortKeys { HAPPENED_AT ID }

type Shop implements Node { id: ID! name: String! email: String! ianaTimezone: String! currencyCode: CurrencyCode! myshopifyDomain: String! }
type Location implements Node { id: ID! legacyResourceId: UnsignedInt64! name: String! }
type MailingAddress implements Node {
  id: ID! name: String firstName: String lastName: String company: String address1: String address2: String
  city: String province: String provinceCode: String zip: String country: String countryCodeV2: CountryCode phone: String
}
type Weight { unit: WeightUnit! value: Float! }
type MoneyV2 { amount: Decimal! currencyCode: CurrencyCode! }
type MoneyBag { shopMoney: MoneyV2! presentmentMoney: MoneyV2! }
type ShippingLine { id: ID title: String! code: String source: String carrierIdentifier: String originalPriceSet: MoneyBag! }

type Order implements Node {
  id: ID! legacyResourceId: UnsignedInt64! name: String! email: String phone: String note: String tags: [String!]!
  createdAt: DateTime! updatedAt: DateTime! processedAt: DateTime! closed: Boolean! closedAt: DateTime cancelledAt: DateTime
  displayFulfillmentStatus: OrderDisplayFulfillmentStatus! displayFinancialStatus: OrderDisplayFinancialStatus
  currencyCode: CurrencyCode! presentmentCurrencyCode: CurrencyCode! totalWeight: UnsignedInt64
  shippingAddress: MailingAddress shippingLine: ShippingLine
  lineItems(${PAGE_ARGS}): LineItemConnection!
  fulfillmentOrders(${PAGE_ARGS}, displayable: Boolean = false, query: String): FulfillmentOrderConnection!
  fulfillments(first: Int): [Fulfillment!]!
}
${CONNECTION('Order')}

type LineItem implements Node {
  id: ID! name: String! title: String! quantity: Int! sku: String requiresShipping: Boolean! originalUnitPriceSet: MoneyBag!
}
${CONNECTION('LineItem')}

type DeliveryMethod implements Node { id: ID! methodType: DeliveryMethodType! }
type FulfillmentOrderAssignedLocation {
  address1: String address2: String city: String countryCode: CountryCode! name: String! phone: String province: String zip: String
  location: Location
}
type FulfillmentOrderDestination implements Node {
  id: ID! address1: String address2: String city: String company: String countryCode: CountryCode email: String
  firstName: String lastName: String phone: String province: String zip: String
}
type FulfillmentOrder implements Node {
  id: ID! status: FulfillmentOrderStatus! requestStatus: FulfillmentOrderRequestStatus!
  createdAt: DateTime! updatedAt: DateTime! orderId: ID! orderName: String! order: Order!
  assignedLocation: FulfillmentOrderAssignedLocation! deliveryMethod: DeliveryMethod destination: FulfillmentOrderDestination
  lineItems(${PAGE_ARGS}): FulfillmentOrderLineItemConnection!
}
${CONNECTION('FulfillmentOrder')}
type FulfillmentOrderLineItem implements Node {
  id: ID! sku: String productTitle: String! totalQuantity: Int! remainingQuantity: Int! weight: Weight lineItem: LineItem!
}
${CONNECTION('FulfillmentOrderLineItem')}

type FulfillmentTrackingInfo { company: String number: String url: URL }
type FulfillmentOriginAddress { address1: String address2: String city: String countryCode: String! provinceCode: String zip: String }
type FulfillmentEvent implements Node {
  id: ID! status: FulfillmentEventStatus! happenedAt: DateTime! createdAt: DateTime! estimatedDeliveryAt: DateTime message: String
  address1: String city: String province: String zip: String country: String latitude: Float longitude: Float
}
${CONNECTION('FulfillmentEvent')}
type Fulfillment implements Node {
  id: ID! legacyResourceId: UnsignedInt64! name: String! status: FulfillmentStatus! displayStatus: FulfillmentDisplayStatus
  createdAt: DateTime! updatedAt: DateTime! deliveredAt: DateTime estimatedDeliveryAt: DateTime inTransitAt: DateTime
  totalQuantity: Int! requiresShipping: Boolean!
  trackingInfo(first: Int): [FulfillmentTrackingInfo!]!
  events(${PAGE_ARGS}, sortKey: FulfillmentEventSortKeys = ID): FulfillmentEventConnection!
  order: Order! location: Location originAddress: FulfillmentOriginAddress
}

type Query {
  shop: Shop!
  node(id: ID!): Node
  order(id: ID!): Order
  orders(${PAGE_ARGS}, query: String, sortKey: OrderSortKeys = ID, savedSearchId: ID): OrderConnection!
  fulfillment(id: ID!): Fulfillment
  fulfillmentOrder(id: ID!): FulfillmentOrder
  location(id: ID): Location
}
`;

const WRITE = `
input FulfillmentOrderLineItemInput { id: ID! quantity: Int! }
input FulfillmentOrderLineItemsInput { fulfillmentOrderId: ID! fulfillmentOrderLineItems: [FulfillmentOrderLineItemInput!] }
input FulfillmentOriginAddressInput { address1: String address2: String city: String countryCode: String! provinceCode: String zip: String }
input FulfillmentTrackingInput { company: String number: String numbers: [String!] url: URL urls: [URL!] }
input FulfillmentInput {
  lineItemsByFulfillmentOrder: [FulfillmentOrderLineItemsInput!]! notifyCustomer: Boolean = false
  originAddress: FulfillmentOriginAddressInput trackingInfo: FulfillmentTrackingInput
}
input FulfillmentEventInput {
  fulfillmentId: ID! status: FulfillmentEventStatus! happenedAt: DateTime estimatedDeliveryAt: DateTime message: String
  address1: String city: String province: String zip: String country: String latitude: Float longitude: Float
}
input OrderInput { id: ID! note: String tags: [String!] email: String }

type FulfillmentCreatePayload { fulfillment: Fulfillment userErrors: [UserError!]! }
type FulfillmentTrackingInfoUpdatePayload { fulfillment: Fulfillment userErrors: [UserError!]! }
type FulfillmentEventCreatePayload { fulfillmentEvent: FulfillmentEvent userErrors: [UserError!]! }
type TagsAddPayload { node: Node userErrors: [UserError!]! }
type OrderUpdatePayload { order: Order userErrors: [UserError!]! }
type FulfillmentOrderMovePayload {
  movedFulfillmentOrder: FulfillmentOrder originalFulfillmentOrder: FulfillmentOrder remainingFulfillmentOrder: FulfillmentOrder
  userErrors: [UserError!]!
}

type Mutation {
  fulfillmentCreate(fulfillment: FulfillmentInput!, message: String): FulfillmentCreatePayload
  fulfillmentTrackingInfoUpdate(fulfillmentId: ID!, trackingInfoInput: FulfillmentTrackingInput!, notifyCustomer: Boolean): FulfillmentTrackingInfoUpdatePayload
  fulfillmentEventCreate(fulfillmentEvent: FulfillmentEventInput!): FulfillmentEventCreatePayload
  tagsAdd(id: ID!, tags: [String!]!): TagsAddPayload
  orderUpdate(input: OrderInput!): OrderUpdatePayload
  fulfillmentOrderMove(id: ID!, newLocationId: ID!, fulfillmentOrderLineItems: [FulfillmentOrderLineItemInput!]): FulfillmentOrderMovePayload
}
`;

export const SDL = READ + WRITE;

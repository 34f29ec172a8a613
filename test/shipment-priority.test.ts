/** Which shipments are live and which are backlog (domain/priority.ts), and LIVE_ORDER_MAX_AGE. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadShipmentPriorities } from '../config/settings';
import { BACKLOG_PRIORITY_KEY, DEFAULT_SHIPMENT_PRIORITIES, LIVE_PRIORITY_KEY, shipmentPriorityKey } from '../domain/priority';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const pulled = (minutesAgo: number) => ({
  shopOrder: {
    facts: { status: 'open' as const, address: 'a'.repeat(32), lines: 'b'.repeat(32) },
    modifiedAt: new Date(NOW - minutesAgo * 60_000).toISOString(),
  },
});

describe('shipmentPriorityKey', () => {
  it('a pulled order changed within the age is live, an older one or a file record is backlog', () => {
    expect(shipmentPriorityKey(pulled(1), DEFAULT_SHIPMENT_PRIORITIES, NOW)).toBe(LIVE_PRIORITY_KEY);
    expect(shipmentPriorityKey(pulled(15), DEFAULT_SHIPMENT_PRIORITIES, NOW)).toBe(LIVE_PRIORITY_KEY);
    expect(shipmentPriorityKey(pulled(16), DEFAULT_SHIPMENT_PRIORITIES, NOW)).toBe(BACKLOG_PRIORITY_KEY);
    expect(shipmentPriorityKey({}, DEFAULT_SHIPMENT_PRIORITIES, NOW)).toBe(BACKLOG_PRIORITY_KEY);
    // A store clock ahead of ours: still live.
    expect(shipmentPriorityKey(pulled(-3), DEFAULT_SHIPMENT_PRIORITIES, NOW)).toBe(LIVE_PRIORITY_KEY);
  });

  it('off: every shipment at the server default', () => {
    expect(shipmentPriorityKey(pulled(1), 'off', NOW)).toBeUndefined();
    expect(shipmentPriorityKey({}, 'off', NOW)).toBeUndefined();
  });
});

describe('LIVE_ORDER_MAX_AGE', () => {
  it('defaults to 15 minutes, takes a duration or off', () => {
    expect(loadShipmentPriorities({})).toEqual({ liveOrderMaxAgeMs: 15 * 60_000 });
    expect(loadShipmentPriorities({ LIVE_ORDER_MAX_AGE: '2h' })).toEqual({ liveOrderMaxAgeMs: 2 * 3_600_000 });
    expect(loadShipmentPriorities({ LIVE_ORDER_MAX_AGE: 'off' })).toBe('off');
  });

  it('refuses anything else, naming the variable', () => {
    for (const bad of ['soon', '8d', '0']) {
      const err = (() => {
        try {
          loadShipmentPriorities({ LIVE_ORDER_MAX_AGE: bad });
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems[0]!.variable).toBe('LIVE_ORDER_MAX_AGE');
      expect((err as ConfigError).problems[0]!.message).toMatch(/or off/);
    }
  });
});

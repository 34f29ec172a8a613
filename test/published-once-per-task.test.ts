/**
 * Each search-attribute upsert is a billed action: a shipment writes its search attributes at most
 * once per workflow task (workflows/shipment/published.ts). Checked on the histories recorded from
 * real runs of the current build (test/fixtures/histories): the events between a
 * WorkflowTaskCompleted and the next workflow task are that task's commands.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const DIR = path.join(__dirname, 'fixtures', 'histories');

interface RecordedEvent {
  eventId: string;
  eventType: string;
  workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } };
}

const shipments = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({ file, events: (JSON.parse(readFileSync(path.join(DIR, file), 'utf8')) as { events: RecordedEvent[] }).events }))
  .filter(({ events }) => events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name === 'shipmentWorkflow');

/** The WorkflowTaskCompleted events whose task wrote search attributes more than once, with how many times. */
function tasksUpsertingTwice(events: RecordedEvent[]): string[] {
  const found: string[] = [];
  let task: string | null = null;
  let upserts = 0;
  const close = () => {
    if (task !== null && upserts > 1) found.push(`task completed at event ${task}: ${upserts} upserts`);
    task = null;
    upserts = 0;
  };
  for (const { eventId, eventType } of events) {
    if (eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED') {
      close();
      task = eventId;
    } else if (eventType === 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED') {
      close();
    } else if (eventType === 'EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES' && task !== null) {
      upserts++;
    }
  }
  close();
  return found;
}

it('has recorded shipment histories to check', () => {
  expect(shipments.length).toBeGreaterThan(50);
});

it.each(shipments.map((s) => [s.file, s.events] as const))(
  '%s: each workflow task writes search attributes at most once',
  (_file, events) => {
    expect(tasksUpsertingTwice(events)).toEqual([]);
  },
);

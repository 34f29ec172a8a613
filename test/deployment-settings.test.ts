/** The worker's deployment settings and the `deployment` command's usage errors (no server needed). */
import { describe, expect, it } from 'vitest';
import { main } from '../client/cli';
import { EXIT } from '../client/cli-support';
import { ConfigError } from '../config/settings';
import { defaultBuildId, loadDeploymentSettings } from '../config/deployment';
import { captureIo } from './helpers/cli';

describe('deployment settings', () => {
  it('leaves versioning off unless asked, and defaults the rest when on', () => {
    expect(loadDeploymentSettings({})).toEqual({ versioning: false });
    expect(loadDeploymentSettings({ WORKER_VERSIONING: 'on' })).toEqual({
      versioning: true,
      deploymentName: 'shipping-sync',
      buildId: undefined,
      becomeCurrent: 'never',
    });
  });

  it('names each bad setting', () => {
    const err = (() => {
      try {
        loadDeploymentSettings({
          WORKER_VERSIONING: 'yes',
          WORKER_DEPLOYMENT_NAME: 'a.b',
          WORKER_BUILD_ID: 'x y',
          WORKER_BECOME_CURRENT: 'now',
        });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems.map((p) => p.variable).sort()).toEqual([
      'WORKER_BECOME_CURRENT',
      'WORKER_BUILD_ID',
      'WORKER_DEPLOYMENT_NAME',
      'WORKER_VERSIONING',
    ]);
  });

  it('derives a build id from the workflow code: another bundle, another id', () => {
    const a = defaultBuildId('workflow code A');
    expect(a).toMatch(/^\d+\.\d+\.\d+.*-[0-9a-f]{12}$/);
    expect(defaultBuildId('workflow code A')).toBe(a);
    expect(defaultBuildId('workflow code B')).not.toBe(a);
  });
});

describe('shipments deployment', () => {
  it.each([
    [[], 'needs an action'],
    [['promote'], 'takes one build id'],
    [['status', 'extra'], 'takes no argument'],
    [['retire', 'bad id!'], 'not a build id'],
    [['promote', 'b1', '--ramp', '0'], '--ramp must be'],
  ])('refuses %j: %s', async (args, message) => {
    const c = captureIo({ env: {} });
    await expect(main(['deployment', ...args], c.io)).rejects.toMatchObject({
      exitCode: EXIT.usage,
      message: expect.stringContaining(message),
    });
  });

  it('has --help', async () => {
    const c = captureIo({ env: {} });
    expect(await main(['deployment', '--help'], c.io)).toBe(EXIT.ok);
    expect(c.stdout()).toContain('promote <buildId>');
  });
});

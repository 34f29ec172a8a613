/** Bundles the workflow code ahead of time for production (`npm run build`). */
import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_CODE } from '../worker-deployment/workflow-bundle';

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
  const { code } = await bundleWorkflowCode(WORKFLOW_CODE);
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, code);
  console.log(`workflow bundle written to ${out} (${(code.length / 1024).toFixed(0)} KiB)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

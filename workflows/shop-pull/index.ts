export { shopPullWorkflow } from './workflow';

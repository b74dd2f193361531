import { analyse } from './analyse.js';
import type { PageFacts, Results } from './checks/types.js';

/** One analysis for the pool of analysis-pool.ts: this module runs in its worker threads. */

export interface AnalyseTask {
  readonly html: string;
  readonly facts: PageFacts;
}

export default function analyseTask(task: AnalyseTask): Results {
  return analyse(task.html, task.facts);
}

/** Runs `task` n times, at most `concurrency` at once; results in call order. */
export async function burst<T>(n: number, task: (i: number) => Promise<T>, concurrency = 32): Promise<T[]> {
  const results: T[] = new Array(n);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      results[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return results;
}

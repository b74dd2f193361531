/**
 * Work held to the end of an event-loop turn (the check phase: setImmediate), in two rounds: the
 * `gather` work (post-charges handing their summed requests to the store) runs before the `send`
 * work (the store's batches written). So the charges of a turn join the same store call as the
 * turn's admission checks instead of a call of their own, and a turn costs one setImmediate
 * however many batches it holds.
 *
 * Work queued while the round runs waits for the next turn, as a setImmediate queued from a
 * setImmediate does; a store batch open when a gather runs is still sent in this round.
 */

type Work = () => void;

let gather: Work[] = [];
let send: Work[] = [];
let scheduled = false;

/** Runs `work` at the end of this turn: `gather` work first, then `send` work. */
export function atTurnEnd(round: 'gather' | 'send', work: Work): void {
  (round === 'gather' ? gather : send).push(work);
  if (!scheduled) schedule();
}

function schedule(): void {
  scheduled = true;
  setImmediate(runTurnEnd);
}

function runTurnEnd(): void {
  const gathered = gather;
  gather = [];
  runAll(gathered);
  // Taken after the gather round: a batch it opened is sent now, with the ones already open.
  const sending = send;
  send = [];
  scheduled = false;
  if (gather.length > 0) schedule();
  runAll(sending);
}

function runAll(works: readonly Work[]): void {
  for (const work of works) {
    try {
      work();
    } catch (err) {
      // As from a setImmediate of its own: uncaught, and the rest of the round still runs.
      process.nextTick(() => {
        throw err;
      });
    }
  }
}

/**
 * How one integration's sends share the worker (one lane per integration): at most `slots` calls
 * to its provider at once; a few more jobs claim their send lease while those calls run, so a slot
 * that frees finds a claimed job instead of waiting a lease commit; and past its slots and what
 * it gets through within the admission wait, its jobs wait in memory only while the lane keeps
 * moving, and otherwise go back to the stream, so a slow provider cannot take the stage's jobs
 * from the other integrations.
 *
 * While several lanes hold jobs, lanes not known to be quick hold at most a share of the process's
 * places each and three quarters of them together: slow providers enough would otherwise fill
 * every place with calls that take seconds, and a quick provider's jobs would wait for them.
 *
 * Leases are claimed ahead only as far as the lane's calls get through during one claim: a slow
 * provider's jobs claim just before a slot frees, a fast one's keep up to a slot's worth claimed.
 * A worker that dies leaves unknown only the sends under way, those claimed for the next slots
 * and those whose outcome was being written.
 */
export interface LaneOptions {
  /** Calls to one integration's provider at once. */
  slots: number;
  /** The places the lanes' jobs share in the process (its room), waiting in a lane or admitted. */
  places: number;
  /**
   * How long a job over the bound may expect to wait for a place; a lane whose calls take longer,
   * or that finished nothing for this long, sends such jobs back to the stream.
   */
  admissionWaitMs: number;
}

/** One job's share of its lane, from admission until its provider answered. */
export interface LaneTicket {
  /** Waits for the turn to claim the send lease. */
  claimTurn(): Promise<void> | undefined;
  /** Waits for a call slot (after the lease is claimed). */
  slot(): Promise<void> | undefined;
  /** The provider answered, or the job ends without a call: everything the job held goes to the next jobs. Idempotent. */
  done(): void;
}

interface Lane {
  /** Jobs given a place: waiting to claim, claiming, claimed and waiting for a slot, or calling. */
  admitted: number;
  /** Jobs over the bound waiting for a place; answered false when the lane stalls. */
  queued: ((admitted: boolean) => void)[];
  /** Jobs claiming their lease or holding a claimed lease without a slot yet. */
  ahead: number;
  claimTurns: (() => void)[];
  calling: number;
  slotTurns: (() => void)[];
  /** How long the lane's calls have lately taken, averaged; undefined before its first. */
  callMs: number | undefined;
  /** When a job of the lane last finished its call (or left without one). */
  movedAt: number;
  stallTimer: NodeJS.Timeout | undefined;
}

/** Lanes kept (with what their calls have taught) after their jobs are gone; the oldest idle ones go first. */
const MAX_LANES = 10_000;
/** Weight of the newest figure in the running averages. */
const SMOOTHING = 0.2;
const average = (previous: number | undefined, latest: number) => (previous === undefined ? latest : (1 - SMOOTHING) * previous + SMOOTHING * latest);

export function createLanes(options: LaneOptions) {
  const { slots, places, admissionWaitMs } = options;
  const lanes = new Map<string, Lane>();
  /** How long a lease claim has lately taken to commit, averaged. */
  let claimMs: number | undefined;
  /** Lanes holding jobs (admitted or queued). */
  const holding = new Set<Lane>();
  const holds = (lane: Lane) => lane.admitted + lane.queued.length;
  /** Counts the lane in as it takes a job… */
  const join = (lane: Lane) => holding.add(lane);
  /** …and out once it has given up its last. */
  const leave = (lane: Lane) => {
    if (holds(lane) === 0) holding.delete(lane);
  };
  /** A lane whose calls take less than the admission wait: it gives its places back soon. */
  const quick = (lane: Lane) => lane.callMs !== undefined && lane.callMs < admissionWaitMs;
  /** Places the lanes not known to be quick may hold together, whatever their number. */
  const slowPlaces = Math.max(1, places - Math.ceil(places / 4));

  const laneOf = (integrationId: string): Lane => {
    let lane = lanes.get(integrationId);
    if (!lane) {
      if (lanes.size >= MAX_LANES) {
        for (const [id, idle] of lanes) {
          if (idle.admitted === 0 && idle.queued.length === 0) {
            lanes.delete(id);
            break;
          }
        }
      }
      lane = {
        admitted: 0,
        queued: [],
        ahead: 0,
        claimTurns: [],
        calling: 0,
        slotTurns: [],
        callMs: undefined,
        movedAt: performance.now(),
        stallTimer: undefined,
      };
      lanes.set(integrationId, lane);
    }
    return lane;
  };

  /** Leases the lane may hold claimed ahead of its slots: what its calls use up during one claim, at least one, at most a slot's worth. */
  function lookahead(lane: Lane): number {
    if (lane.callMs === undefined || claimMs === undefined) return slots;
    return Math.min(slots, Math.max(1, Math.ceil((slots * claimMs) / Math.max(lane.callMs, 1))));
  }

  /** Jobs over the bound the lane gets through within the admission wait, judging by its calls so far. */
  function queueRoom(lane: Lane): number {
    if (lane.callMs === undefined) return slots;
    if (lane.callMs >= admissionWaitMs) return 0;
    return Math.floor((slots * admissionWaitMs) / Math.max(lane.callMs, 1));
  }

  /**
   * Whether the lane, not known to be quick, holds its share of the places already while other
   * lanes hold jobs too: an equal share with one kept for a lane yet to come, and with the other
   * lanes not known to be quick, at most three quarters of the places. Lanes that came first hold
   * more than their share until their calls end, and the last quarter is kept for quick lanes.
   * A lane whose pace is not known yet always gets one place, to learn it. A quick lane gives its
   * places back within the admission wait, so it takes what its own bounds allow: turned away,
   * its jobs would wait a whole return to the stream.
   */
  function holdsItsShare(lane: Lane): boolean {
    if (quick(lane)) return false;
    const others = holding.size - (holding.has(lane) ? 1 : 0);
    if (others === 0 || (lane.callMs === undefined && holds(lane) === 0)) return false;
    if (holds(lane) >= Math.max(1, Math.floor(places / (others + 2)))) return true;
    let held = 0;
    for (const other of holding) if (!quick(other)) held += holds(other);
    return held >= slowPlaces;
  }

  /** Sends the queued jobs back once the lane has finished nothing for the admission wait. */
  function watchStall(lane: Lane): void {
    if (lane.stallTimer) return;
    const check = () => {
      lane.stallTimer = undefined;
      if (lane.queued.length === 0) return;
      const still = performance.now() - lane.movedAt;
      if (still < admissionWaitMs) {
        lane.stallTimer = setTimeout(check, admissionWaitMs - still).unref();
        return;
      }
      for (const answer of lane.queued.splice(0)) answer(false);
      leave(lane);
    };
    lane.stallTimer = setTimeout(check, admissionWaitMs).unref();
  }

  function ticket(lane: Lane): LaneTicket {
    let state: "admitted" | "claiming" | "calling" | "done" = "admitted";
    let calledAt = 0;
    /** Gives up the claim turn (when the job has its slot or ends) to the next job waiting for one. */
    const leaveAhead = () => {
      const next = lane.claimTurns.shift();
      if (next) next();
      else lane.ahead -= 1;
    };
    return {
      claimTurn() {
        state = "claiming";
        if (lane.ahead < lookahead(lane)) {
          lane.ahead += 1;
          return undefined;
        }
        return new Promise((resolve) => lane.claimTurns.push(resolve));
      },
      slot() {
        // The claim turn is held until the call starts: it bounds the claimed leases waiting for a slot.
        const granted = () => {
          if (state === "claiming") leaveAhead();
          state = "calling";
          calledAt = performance.now();
        };
        if (lane.calling < slots) {
          lane.calling += 1;
          granted();
          return undefined;
        }
        return new Promise((resolve) =>
          lane.slotTurns.push(() => {
            granted();
            resolve();
          }),
        );
      },
      done() {
        if (state === "done") return;
        if (state === "claiming") leaveAhead();
        if (state === "calling") {
          lane.callMs = average(lane.callMs, performance.now() - calledAt);
          const next = lane.slotTurns.shift();
          if (next) next();
          else lane.calling -= 1;
        }
        state = "done";
        lane.movedAt = performance.now();
        const queued = lane.queued.shift();
        if (queued) queued(true);
        else lane.admitted -= 1;
        leave(lane);
      },
    };
  }

  return {
    /**
     * Gives the job a place in its integration's lane: at once while the lane holds fewer than its
     * slots and the jobs it gets through within the admission wait (at most as many again), after
     * a wait while it keeps moving fast enough, or not at all (undefined: the job goes back to the
     * stream). A slow lane holds no job waiting for a slot: such a job would wait a whole call
     * while holding one of the process's places. Nor does a lane not known to be quick take more
     * than its share of the places while others hold jobs.
     */
    enter(integrationId: string): LaneTicket | undefined | Promise<LaneTicket | undefined> {
      const lane = laneOf(integrationId);
      if (holdsItsShare(lane)) return undefined;
      if (lane.admitted < slots + Math.min(slots, queueRoom(lane))) {
        join(lane);
        lane.admitted += 1;
        return ticket(lane);
      }
      if (lane.queued.length >= queueRoom(lane)) return undefined;
      join(lane);
      watchStall(lane);
      return new Promise((resolve) => lane.queued.push((admitted) => resolve(admitted ? ticket(lane) : undefined)));
    },
    /**
     * About how long the integration's lane needs to get through the jobs it holds: when a job
     * sent back is worth trying again. Undefined until one of its calls has finished: its pace is
     * not known yet.
     */
    backlogMs(integrationId: string): number | undefined {
      const lane = lanes.get(integrationId);
      if (lane?.callMs === undefined) return undefined;
      return ((lane.admitted + lane.queued.length) * lane.callMs) / slots;
    },
    /** How long a batch of lease claims took to commit: how far ahead the lanes claim follows it. */
    claimTook(ms: number): void {
      claimMs = average(claimMs, ms);
    },
  };
}

/**
 * Places shared by the sends a process holds, given in the order they were asked for. `ready()`
 * resolves once a place is free that nobody waits for: when taking more work is worth it.
 */
export function createRoom(places: number) {
  let free = places;
  const waiting: (() => void)[] = [];
  let readyWaiters: (() => void)[] = [];
  const wakeReady = () => {
    if (free > waiting.length && readyWaiters.length > 0) {
      const woken = readyWaiters;
      readyWaiters = [];
      for (const wake of woken) wake();
    }
  };
  return {
    take(): Promise<void> | undefined {
      if (free > 0 && waiting.length === 0) {
        free -= 1;
        return undefined;
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
    give(): void {
      const next = waiting.shift();
      if (next) next();
      else free += 1;
      wakeReady();
    },
    ready(): Promise<void> | undefined {
      if (free > waiting.length) return undefined;
      return new Promise((resolve) => readyWaiters.push(resolve));
    },
  };
}

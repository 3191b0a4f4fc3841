import PostgresTestSupport
import Testing

/// The test databases' throttle (`AsyncSemaphore`) never holds a test for ever: a test that
/// holds a database and asks for a second one (a copy, a backup) gets it once its patience
/// runs out, even when every permit is held. Without that, the suite deadlocked now and then.
/// The time limits only turn a hang into a failure.
@Suite struct TestDatabaseSlotsTests {
    @Test(.timeLimit(.minutes(5))) func aHolderOfEveryPermitStillGetsAnotherAfterItsPatience() async {
        let slots = AsyncSemaphore(permits: 1, patience: .milliseconds(200))
        await slots.acquire()
        let started = ContinuousClock.now
        await slots.acquire()
        #expect(ContinuousClock.now - started >= .milliseconds(200), "the second waited for its patience first")
        #expect(slots.available == -1, "taken over the limit")
        // Both released: the permit taken over the limit is paid back, and one is free again.
        slots.release()
        slots.release()
        #expect(slots.available == 1)
    }

    @Test(.timeLimit(.minutes(5))) func aReleasedPermitGoesToTheFirstWaiter() async {
        // A patience longer than the time limit: the waiter can only get the permit released.
        let slots = AsyncSemaphore(permits: 1, patience: .seconds(3600))
        await slots.acquire()
        let waiter = Task { await slots.acquire() }
        // Most likely waiting by then; had it not begun, it finds the released permit free.
        try? await Task.sleep(for: .milliseconds(50))
        slots.release()
        await waiter.value
        #expect(slots.available == 0, "the permit went to the waiter, not back to the count")
    }
}

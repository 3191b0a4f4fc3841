import PostgresTestSupport
import Testing

/// The test databases' throttle (`AsyncSemaphore`) never holds a test for ever: a test that
/// holds a database and asks for a second one (a copy, a backup) gets it once its patience
/// runs out, even when every permit is held. Without that, the suite deadlocked now and then.
@Suite struct TestDatabaseSlotsTests {
    @Test(.timeLimit(.minutes(1))) func aHolderOfEveryPermitStillGetsAnotherAfterItsPatience() async {
        let slots = AsyncSemaphore(permits: 1, patience: .milliseconds(200))
        await slots.acquire()
        let started = ContinuousClock.now
        await slots.acquire()
        #expect(ContinuousClock.now - started >= .milliseconds(200), "the second waited for its patience first")
        // Both released: the permit taken over the limit is paid back, and one is free again.
        slots.release()
        slots.release()
        let again = ContinuousClock.now
        await slots.acquire()
        #expect(ContinuousClock.now - again < .milliseconds(200), "a free permit is taken at once")
    }

    @Test(.timeLimit(.minutes(1))) func aReleasedPermitGoesToTheFirstWaiter() async {
        let slots = AsyncSemaphore(permits: 1, patience: .seconds(30))
        await slots.acquire()
        let waiter = Task { await slots.acquire() }
        try? await Task.sleep(for: .milliseconds(50))
        let released = ContinuousClock.now
        slots.release()
        await waiter.value
        #expect(ContinuousClock.now - released < .seconds(5), "handed over at the release, not after the patience")
    }
}

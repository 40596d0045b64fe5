extension SimDevice {
  /// Runs `body` — `async` code of the app's own, such as an actor's setup — to its end on the
  /// simulator's thread, from code that cannot `await` (the app's `init(device:)` above all),
  /// and returns what it returns.
  ///
  /// An actor store cannot make its engine in its own `init`, and the app's `init` cannot await
  /// the actor: Apple's sample starts a `Task` to call `initializeSyncEngine()`, and a `Task`
  /// runs outside the simulator, on another thread, at a time that differs between runs. Call
  /// the actor here instead:
  ///
  ///     init(device: SimDevice) {
  ///       store = SyncedStore(device: device)    // its init no longer starts a Task
  ///       try! device.runToCompletion { [store] in await store.initializeSyncEngine() }
  ///     }
  ///
  /// `body` runs within the call into the app under way (its launch, an intent, a read of what
  /// it shows, a delegate call), on the same executor, before anything else happens in the
  /// world: the same seed runs it the same way every time. Its own actors work inside it, as in
  /// any call into the app's code. It may be called from `perform`, `shownRecords` and the
  /// delegate's methods too, and within another `runToCompletion`.
  ///
  /// - Throws: ``WaitedOutside`` when `body` waits on something the simulator does not run —
  ///   the main actor, `Task.sleep`, a real timer — and so cannot finish. The call does not
  ///   hang, and the run fails with the reason, the device and the time (`RunReport.appErrors`),
  ///   whether or not the app catches the error.
  public func runToCompletion<T>(_ body: @escaping () async -> T) throws(WaitedOutside) -> T {
    // (The app's code runs on this thread only, until it returns: what `body` captures and
    // returns does not cross threads unless it waits elsewhere, and then the run has failed.)
    let call = Unchecked(body)
    guard InlineRunner.callUnderWay else {
      do { return try ownRunner.run { Unchecked(await call.value()) }.value } catch {
        // No call under way fails with it: the device's next delegate call stops the run.
        link?.misuse = link?.misuse ?? WaitedOutside().description
        throw WaitedOutside()
      }
    }
    do { return try InlineRunner.runWithinCurrentCall { Unchecked(await call.value()) }.value } catch { throw WaitedOutside() }
  }

  /// `async` code run with ``SimDevice/runToCompletion(_:)`` waited on something the simulator
  /// does not run (the main actor, `Task.sleep`, a real timer), so it could not finish there.
  public struct WaitedOutside: Error, CustomStringConvertible {
    /// The reason, as the run's report gives it.
    public var description: String { InlineRunner.Suspended().description }
  }
}

import Foundation
import Scenarios
import Testing

@testable import SimSyncEngine

/// `SimDevice.runToCompletion`: an app's `async` code run to its end from a synchronous place —
/// an actor store's setup at launch, as in Apple's sample — inside the simulator, the same way
/// in every run; and a body that waits on something the simulator does not run fails the run
/// with a sentence instead of hanging.
@Suite struct RunToCompletionTests {
  /// An actor store that makes its engine in an `async` method called at launch (the guide's
  /// example, `Porting/SyncedDatabase.swift`) passes a lesson, runs the same way twice, and
  /// fuzzes with no error in its code.
  @Test func anActorStoreMakesItsEngineAtLaunch() throws {
    let file = try Scenario.load("app-killed-before-sync")
    let report = ScenarioRunner.run(file, app: SyncedContactsApp.self).report
    #expect(report.appErrors.isEmpty, "\(report.appErrors)")
    #expect(report.passed, "\(report.text)")
    #expect(ScenarioRunner.run(file, app: SyncedContactsApp.self).report.traceHash == report.traceHash)
    for seed: UInt64 in 1...4 {
      let fuzzed = Fuzzer.run(seed: seed, shape: WorkloadShape(), app: AppUnderTest(SyncedContactsApp.self)).report
      #expect(fuzzed.appErrors.isEmpty, "seed \(seed): \(fuzzed.appErrors)")
      #expect((fuzzed.appIntents?.applied ?? 0) > 0, "seed \(seed)")
    }
  }

  /// Inside a call into the app, the body runs on that call's executor, with the app's actors,
  /// within another `runToCompletion` too; outside any call (an app made by hand in a test), on
  /// the device's own.
  @Test func theBodyRunsWithinTheCallAndOutsideAny() throws {
    let device = SimDevice(name: "iPad", index: 0, disk: SimDisk())
    let counter = Counter()
    let runner = InlineRunner()
    let made = Unchecked(device)
    let value = try runner.run { () async -> Int in
      let first = (try? made.value.runToCompletion { await counter.next() }) ?? -1
      let nested = (try? made.value.runToCompletion { (try? made.value.runToCompletion { await counter.next() }) ?? -1 }) ?? -1
      return first * 10 + nested
    }
    #expect(value == 12)
    #expect(try device.runToCompletion { await counter.next() } == 3)
  }

  /// A body that awaits a timer cannot finish: it throws, and the call it ran within fails too,
  /// though the app's code caught the error. (A timer, not the main actor: a test that holds the
  /// main actor while a task waits for it held up the whole run's reporting for minutes.)
  @Test func aBodyThatWaitsOutsideThrowsAndFailsTheCall() throws {
    let device = Unchecked(SimDevice(name: "iPad", index: 0, disk: SimDisk()))
    let runner = InlineRunner()
    let caught = Caught()
    #expect(throws: InlineRunner.Suspended.self) {
      try runner.run { () async -> Int in
        do {
          return try device.value.runToCompletion { () async -> Int in
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }  // never resumed: nothing the simulator runs
            return 1
          }
        } catch {
          caught.error = error as? SimDevice.WaitedOutside
          return 0
        }
      }
    }
    #expect(
      caught.error?.description
        == "the delegate's call waited on something outside the simulator (an actor, the main actor, a timer): delegate code must only await the engine and its own async functions"
    )
    // The runner goes on: the next call is not failed by the last.
    #expect(try runner.run { () async -> Int in 7 } == 7)
  }

  /// In a run: the launch fails with the sentence, the device and the time (the iPad's app is
  /// launched for its first intent, at 1 s), and the run does not hang.
  @Test func anAppWhoseSetupWaitsOutsideFailsTheRun() throws {
    let report = ScenarioRunner.run(try Scenario.load("app-killed-before-sync"), app: MainActorSetupApp.self).report
    #expect(
      report.appErrors.first
        == "iPad at 1.000s: the delegate's call waited on something outside the simulator (an actor, the main actor, a timer): delegate code must only await the engine and its own async functions",
      "\(report.appErrors)")
    #expect(!report.passed)
  }
}

/// An actor the bodies await.
actor Counter {
  var count = 0
  func next() -> Int {
    count += 1
    return count
  }
}

/// The error a body threw, kept by the test.
final class Caught: @unchecked Sendable {
  var error: SimDevice.WaitedOutside?
}

/// The actor app, whose setup first tells a `@MainActor` view model: the simulator does not run
/// the main actor. It keeps an engine of its own for the run to go on after the failure.
final class MainActorSetupApp: SimApp {
  let store: MainActorSetupStore
  let fallback: SyncedDatabase
  let fallbackEngine: SyncEngine
  var syncEngine: SyncEngine { store.engine ?? fallbackEngine }

  init(device: SimDevice) {
    store = MainActorSetupStore(device: device)
    fallback = SyncedDatabase(device: device)
    fallbackEngine = SyncEngine(.init(database: device.database, stateSerialization: nil, delegate: fallback))
    try? device.runToCompletion { [store] in await store.initializeSyncEngine() }
  }

  func perform(_ intent: AppIntent) -> Bool { false }
  func shownRecords() -> [SyncRecord] { [] }
}

/// Its store: as ``SyncedDatabase``, with a view model on the main actor.
actor MainActorSetupStore {
  let device: SimDevice
  let delegate: SyncedDatabase
  nonisolated(unsafe) var engine: SyncEngine?

  init(device: SimDevice) {
    self.device = device
    delegate = SyncedDatabase(device: device)
  }

  func initializeSyncEngine() async {
    // (As a view model's update on the main actor would: something the simulator does not run.)
    await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }  // never resumed: nothing the simulator runs
    engine = SyncEngine(.init(database: device.database, stateSerialization: nil, delegate: delegate))
  }
}

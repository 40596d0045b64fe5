import SimSyncEngine
import SimTesting
import Testing

/// The app's own delegate on every simulated device, judged by the oracle from what its store
/// shows. Values in a scenario are unique per intent: that is how the oracle tells whose edit
/// survived without seeing inside the app.
@Suite struct NotesAppSyncTests {
  /// Every named lesson for apps, bound to the app's own schema (lists and reminders, named by
  /// UUID): each lesson's types and fields are played by the app's, and each of its `expect`
  /// lines must hold. A lesson that needs what the schema lacks says so (appLessons).
  @Test(arguments: appLessons(for: RemindersApp.self).filter(\.applies).map(\.name))
  func remindersLoseNothing(lesson: String) {
    expectScenarioHolds(app: RemindersApp.self, scenario: lesson)
  }

  /// This package's own scenario (scenarios/), on an app that takes any types.
  @Test func notesLoseNothingWhenKilled() {
    expectNoViolations(app: NotesApp.self, scenario: "kill-on-three-devices")
  }

  /// Random workloads drawn from the app's schema, under random faults: kills, partitions, lost
  /// and duplicated messages, outages, throttling, CloudKit errors, zone deletions. A run whose
  /// intents the app refuses fails too. `SIM_FUZZ_SEEDS=1...100000` runs a nightly range.
  @Test func survivesFuzzing() {
    expectFuzzPasses(app: RemindersApp.self, seeds: 1...30)
  }

  /// The same test catches a delegate that does not carry out its schema's delete rule.
  @Test func catchesAnAppThatLeavesRemindersInADeletedList() {
    withKnownIssue("the reminders stay in a list that is gone") {
      expectScenarioHolds(app: RemindersAppNotCascading.self, scenario: "app-list-deleted")
    }
  }
}

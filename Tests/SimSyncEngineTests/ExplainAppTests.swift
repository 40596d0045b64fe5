import Foundation
import Replica
import Scenarios
import Testing

@testable import SimSyncEngine

/// `explain --app`: the app's code is the policy, so an explanation of a run with an app names
/// no preset's setting (`winner=hlc`, `retry=never`, `account=wipe`…) and no stamp of one (an
/// app's writes carry none: a stamp read from them prints as `-9223372036.854775808s`).
@Suite struct ExplainAppTests {
  /// What a preset would print: its settings line, an axis `key=`, a stamp.
  static func presetWords(in text: String) -> [String] {
    var found: [String] = []
    for marker in ["policy settings:", "hlc ", "-9223372036", "stamped "] where text.contains(marker) { found.append(marker) }
    for (key, _) in PolicySettings().pairs where text.contains(" \(key)=") || text.contains("(\(key)=") || text.contains("\n\(key)=") {
      found.append("\(key)=")
    }
    return found
  }

  static let apps: [AppUnderTest] = [
    AppUnderTest(NotesAppOverwritingPendingEdits.self), AppUnderTest(NotesAppGivingUpOnTransientErrors.self),
    AppUnderTest(NotesAppWipingOnSignOut.self), AppUnderTest(RemindersAppNotCascading.self),
  ]

  /// Fuzz cases of planted bugs (skewed and drifting clocks, clock jumps, kills, errors) and
  /// their shrunk scenarios, explained with the app.
  @Test(arguments: apps.indices)
  func fuzzedAndShrunkAppRunsNameNoPreset(app index: Int) throws {
    let app = Self.apps[index]
    var explained = 0
    for seed: UInt64 in 1...12 {
      let fuzzCase = Fuzzer.run(seed: seed, shape: WorkloadShape(), app: app)
      guard !fuzzCase.report.violations.isEmpty else { continue }
      let text = Explanation.run(fuzzCase.file, app: app, seed: seed).text
      #expect(Self.presetWords(in: text).isEmpty, "seed \(seed): \(Self.presetWords(in: text))\n\(text)")
      explained += 1
      if explained == 1, let shrunk = Shrinker.shrink(fuzzCase.file, seed: seed, app: app, maxRuns: 60) {
        let again = Explanation.run(shrunk.file, app: app, seed: seed).text
        #expect(Self.presetWords(in: again).isEmpty, "shrunk seed \(seed): \(again)")
      }
    }
    #expect(explained > 0, "no failing seed to explain")
  }

  /// What a device did, told in the story of a record and on the timeline: for an app, without
  /// the preset setting that does the same (`account=wipe`, `permission-failure=ignore`). (The
  /// oracle's own sentence of the lost edit names no setting for an app either.)
  @Test func theStoryAndTheTimelineNameNoPresetForWhatTheAppDid() throws {
    let wiping = Explanation.run(try Scenario.load("app-signed-out-offline"), app: AppUnderTest(NotesAppWipingOnSignOut.self)).text
    let wiped = wiping.split(separator: "\n").filter { $0.contains("deletes its local data on the account change") }
    #expect(!wiped.isEmpty, "\(wiping)")
    #expect(wiped.allSatisfy { !$0.contains("account=wipe") }, "\(wiped)")
    let sharing = AppUnderTest(SharingNotesAppIgnoringPermissionFailure.self)
    let file = try Scenario.load("permission-dropped-offline")
    let (refusing, result) = Explanation.run(file, app: sharing)
    let refused = refusing.split(separator: "\n").filter { $0.contains("is refused the save of") }
    #expect(!refused.isEmpty, "\(refusing)")
    #expect(refused.allSatisfy { $0.hasSuffix("keeps showing the edit as saved") }, "\(refused)")
    let timeline = TimelineSVG.render(result)
    #expect(timeline.contains("the app still shows the edits saved"))
    #expect(!timeline.contains("edits saved (permission-failure=ignore)"))
  }
}

import Foundation
import SimTesting
import Testing

/// The messages of the issues a block records, for checking a helper's failure text.
final class IssueLog: @unchecked Sendable {
  private let lock = NSLock()
  private var _messages: [String] = []

  var messages: [String] {
    lock.lock()
    defer { lock.unlock() }
    return _messages
  }

  /// A known-issue matcher that records every issue's comments and accepts it; the test then
  /// checks how many there were and what they said.
  var matcher: KnownIssueMatcher {
    { issue in
      self.lock.lock()
      defer { self.lock.unlock() }
      self._messages.append(issue.comments.map(\.rawValue).joined(separator: "\n"))
      return true
    }
  }
}

/// Scenario text parsed in memory; `source` names it in reports.
func inlineScenario(_ text: String, source: String = "inline") throws -> ScenarioFile {
  try Scenario.parse(text, source: source).get()
}

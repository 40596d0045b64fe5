import Replica
import Scenarios
import SimSyncEngine

/// One of the named app lessons (`app-*` scenarios), as it applies to an app: bound to its
/// schema, or why it does not apply (the role the app's schema lacks, or names it does not reuse).
public struct AppLesson: Sendable, Hashable, CustomStringConvertible {
  /// The lesson's name (`app-conflicting-save`).
  public var name: String
  /// How its types and fields map onto the app's (`Note → Reminder (title → title, tag →
  /// priority)`); nil when it runs as written.
  public var boundTo: String?
  /// Why it does not apply to the app, in one sentence; nil when it does.
  public var doesNotApply: String?
  /// Whether it runs on the app.
  public var applies: Bool { doesNotApply == nil }
  /// `app-conflicting-save`, or `app-reinserted-note (does not apply: …)`.
  public var description: String { name + (doesNotApply.map { " (does not apply: \($0))" } ?? "") }
}

/// The named app lessons, each bound to your app's schema or saying why it does not apply — for a
/// test that runs every lesson that applies:
///
///     @Test(arguments: appLessons(for: RemindersApp.self).filter(\.applies).map(\.name))
///     func everyLessonHolds(_ lesson: String) {
///       expectScenarioHolds(app: RemindersApp.self, scenario: lesson)
///     }
public func appLessons<App: SimApp>(for app: App.Type) -> [AppLesson] {
  let subject = AppUnderTest(app)
  return Scenario.builtInNames.filter { $0.hasPrefix("app-") }.sorted().compactMap { name in
    guard let file = try? Scenario.builtIn(name) else { return nil }
    switch subject.bind(file) {
    case .success(let binding): return AppLesson(name: name, boundTo: binding.summary, doesNotApply: nil)
    case .failure(let mismatch): return AppLesson(name: name, boundTo: nil, doesNotApply: mismatch.message)
    }
  }
}

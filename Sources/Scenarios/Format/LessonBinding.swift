import Replica

/// A lesson bound to an app's schema: the scenario rewritten on it, and how its types and fields map.
///
/// The app lessons (`app-conflicting-save`, `app-concurrent-appends`, …) are written on a small
/// `Note` schema; ``ScenarioFile/bound(to:appName:reusesNames:)`` plays each lesson type the
/// timeline creates with a type of the app, and each field it writes or checks with a field of
/// that type:
///
///     let lesson = try Scenario.load("app-conflicting-save")
///     switch lesson.bound(to: reminders, appName: "RemindersApp", reusesNames: false) {
///     case .success(let binding): print(binding.summary ?? "as written")
///     // Note → Reminder (title → title, tag → priority)
///     case .failure(let mismatch): print(mismatch.message)
///     }
package struct LessonBinding: Hashable, Sendable {
  /// A lesson field and the app field that plays it.
  package struct FieldMap: Hashable, Sendable {
    /// The field's name in the lesson's type (`tag`).
    package var lesson: String
    /// The name of the app's field that plays it (`priority`).
    package var app: String
    /// `lesson` played by `app`.
    package init(lesson: String, app: String) {
      self.lesson = lesson
      self.app = app
    }
  }

  /// A lesson type and the app type that plays it, with the fields the lesson uses.
  package struct TypeMap: Hashable, Sendable {
    /// The type's name in the lesson (`Note`).
    package var lesson: String
    /// The name of the app's type that plays it (`Reminder`).
    package var app: String
    /// The lesson fields the timeline or the expectations use, in the lesson's declaration
    /// order, each with the app field that plays it.
    package var fields: [FieldMap]
    /// `lesson` played by `app`, field by field.
    package init(lesson: String, app: String, fields: [FieldMap]) {
      self.lesson = lesson
      self.app = app
      self.fields = fields
    }
  }

  /// The lesson rewritten on the app's schema: its creates, edits and field expectations name
  /// the app's types and fields, with literals converted to their kinds. Identical to the lesson
  /// when the schemas already agree.
  package var file: ScenarioFile
  /// How the lesson's types map, in the lesson's declaration order; empty when the schemas agree.
  package var types: [TypeMap]
  /// The mapping for people, `Note → Reminder (title → title, tag → priority)` (several types
  /// joined by `; `); nil when the schemas agree.
  package var summary: String?

  /// A binding of `file` with these type maps and summary.
  package init(file: ScenarioFile, types: [TypeMap], summary: String?) {
    self.file = file
    self.types = types
    self.summary = summary
  }
}

/// Why a lesson cannot run on an app's schema: one sentence a user understands.
///
/// It names the role the app's schema lacks, in the lesson's terms ("a record type with a text
/// field that is appended to (its Note's body)"), and what the schema has instead.
package struct LessonMismatch: Error, Hashable, Sendable, CustomStringConvertible {
  /// The sentence: what the lesson needs, and why the app does not give it.
  package var message: String
  /// A mismatch saying `message`.
  package init(message: String) { self.message = message }
  /// The sentence, as ``message``.
  package var description: String { message }
}

extension ScenarioFile {
  /// The lesson bound to an app's schema, or why it cannot be.
  ///
  /// The types the timeline creates, and the fields the timeline writes, edits or checks, are
  /// each played by a distinct type and field of `schema` of a compatible kind, the best
  /// assignment found by a deterministic score (same type name, same kind, same field name,
  /// same `mutable`; ties go to the app's declaration order). A lesson `string` is played by a
  /// `string`, an `int` or a `date` (its literals renumbered 1, 2, 3… or 1s, 2s, 3s… in order of
  /// first appearance), or at a pinch by `text`; `text` only by `text`; an `int` or `date` by
  /// either (renumbered when needed) or a `string` (written as its decimal text); `bool` by
  /// `bool`; `ref T` by a reference to the type playing `T`.
  ///
  /// - Parameters:
  ///   - schema: The app's record types.
  ///   - appName: The app's name, for the mismatch sentence.
  ///   - reusesNames: Whether the app can make a record again under a deleted one's name; a
  ///     lesson that does so does not apply to an app that cannot.
  /// - Returns: The file unchanged, with no type maps, when its schema already has the same
  ///   types with the same fields, names and kinds as `schema`; else the file rewritten on
  ///   `schema`; or the role the schema lacks.
  /// - Complexity: A capped backtracking search over the app's types and fields.
  package func bound(to schema: Schema, appName: String, reusesNames: Bool) -> Result<LessonBinding, LessonMismatch> {
    let uses = _LessonUses(self)
    if !reusesNames, let again = uses.recreated {
      return .failure(
        LessonMismatch(
          message:
            "\(name) makes \(again.id) again under the name of a deleted record\(again.line > 0 ? " (line \(again.line))" : ""); \(appName) gives every record a name of its own, so the lesson does not apply to it"
        ))
    }
    if Self._sameShape(self.schema, schema) { return .success(LessonBinding(file: self, types: [], summary: nil)) }
    var search = _LessonSearch(uses: uses, app: schema)
    guard let plan = search.best() else {
      return .failure(LessonMismatch(message: search.mismatch(lesson: name, app: appName)))
    }
    return .success(_rewritten(on: schema, plan: plan, uses: uses))
  }

  /// Whether two schemas have the same types, in order, with the same fields, names and kinds.
  static func _sameShape(_ a: Schema, _ b: Schema) -> Bool {
    a.types.count == b.types.count
      && zip(a.types, b.types).allSatisfy { s, t in
        s.name == t.name && s.fields.count == t.fields.count
          && zip(s.fields, t.fields).allSatisfy { f, g in f.name == g.name && f.kind == g.kind }
      }
  }
}

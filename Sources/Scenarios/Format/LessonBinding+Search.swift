import Replica

/// The search for the best way to play a lesson's types and fields with an app's: each used
/// lesson type by a distinct app type, each used field by a distinct field of that type of a
/// compatible kind, maximizing a score; ties go to the app's declaration order.
///
/// - Complexity: Backtracking with a bound, capped at ``nodeLimit`` steps (schemas are small).
struct _LessonSearch {
  /// The app type chosen for each used type (`types[i]` plays `uses.types[i]`), and the app
  /// field for each of its used fields (`fields[i][k]` plays `uses.types[i].fields[k]`).
  struct Plan {
    var types: [Int]
    var fields: [[Int]]
  }

  /// What the lesson uses.
  let uses: _LessonUses
  /// The app's schema.
  let app: Schema
  /// Search steps taken so far.
  var nodes = 0
  /// The most steps a search takes; past it, the best assignment found so far stands.
  static let nodeLimit = 200_000
  /// The score a type gets for having the lesson type's name: more than any fields can add.
  static let sameTypeName = 1_000

  init(uses: _LessonUses, app: Schema) {
    self.uses = uses
    self.app = app
  }

  // MARK: - Scores

  /// How well an app field's kind plays a lesson field's: 3 the same kind, 2 a near one (numbers
  /// and dates for a string, each other for numbers and dates), 1 the last resort (text for a
  /// string, a string for a number or date), 0 not at all. A reference must refer to the type
  /// playing the lesson's target (`refs`: lesson type name → app type name; nil: any type).
  static func kindPoints(_ lesson: FieldKind, _ app: FieldKind, refs: [String: String]?) -> Int {
    switch (lesson, app) {
    case (.string, .string), (.text, .text), (.int, .int), (.date, .date), (.bool, .bool), (.double, .double), (.bytes, .bytes), (.asset, .asset): 3
    case (.string, .int), (.string, .date), (.int, .date), (.date, .int): 2
    case (.string, .text), (.int, .string), (.date, .string): 1
    case (.ref(let target), .ref(let other)): (refs.map { $0[target] == other } ?? true) ? 3 : 0
    default: 0
    }
  }

  /// Why an app type cannot play a used type whatever its fields (`is append-only`, `is a
  /// singleton`), or nil when it may. A type whose records must not share values plays a plain
  /// lesson type only when the lesson makes at most one record of it.
  func structuralProblem(_ used: _LessonUses.UsedType, _ type: RecordType) -> String? {
    if used.spec.appendOnly != type.appendOnly { return type.appendOnly ? "is append-only" : "is not append-only" }
    switch (used.spec.uniqueness, type.uniqueness) {
    case (nil, nil), (.singleton?, .singleton?):
      return nil
    case (nil, .singleton?):
      return used.ids.count > 1 ? "is a singleton" : nil
    case (nil, .fields(let unique)?):
      return used.ids.count > 1 ? "is unique by " + unique.map { type.fields[$0].name }.joined(separator: ", ") : nil
    case (.singleton?, _):
      return "is not a singleton"
    case (.fields(let lessonUnique)?, .fields(let unique)?):
      return lessonUnique.count == unique.count ? nil : "is unique by " + unique.map { type.fields[$0].name }.joined(separator: ", ")
    case (.fields?, _):
      return "is not unique by any fields"
    }
  }

  /// The score of playing the `k`-th used field of `used` with field `g` of `type`, or nil when
  /// it cannot: the kind counts most, then the same name, then the same `mutable`. The fields
  /// a lesson type is unique by are played by the fields the app type is unique by.
  func fieldScore(_ used: _LessonUses.UsedType, _ k: Int, _ type: RecordType, _ g: Int, refs: [String: String]?) -> Int? {
    let lesson = used.fields[k].spec
    let field = type.fields[g]
    let points = Self.kindPoints(lesson.kind, field.kind, refs: refs)
    guard points > 0 else { return nil }
    // A reference plays one with the same delete rule: what the lesson expects of a delete
    // (the children gone, or their reference cleared) is the rule's.
    if lesson.referencedType != nil, lesson.onDelete != field.onDelete { return nil }
    if case .fields(let lessonUnique)? = used.spec.uniqueness, case .fields(let unique)? = type.uniqueness {
      let lessonIndex = used.spec.fieldIndex(named: lesson.name) ?? -1
      guard lessonUnique.contains(lessonIndex) == unique.contains(g) else { return nil }
    }
    return points * 4 + (lesson.name == field.name ? 2 : 0) + (lesson.mutable == field.mutable ? 1 : 0)
  }

  /// The best fields of app type `a` for used type `i`, and their score (with the type's own
  /// name bonus), or nil when its fields cannot play them.
  mutating func bestFields(_ i: Int, on a: Int, refs: [String: String]?) -> (fields: [Int], score: Int)? {
    let used = uses.types[i]
    let type = app.types[a]
    let table = used.fields.indices.map { k in type.fields.indices.map { g in fieldScore(used, k, type, g, refs: refs) } }
    guard let choice = Self.bestChoice(table, nodes: &nodes) else { return nil }
    return (choice.columns, choice.score + (used.spec.name == type.name ? Self.sameTypeName : 0))
  }

  /// The injective choice of a column for each row that maximizes the sum of the scores (nil:
  /// not allowed); of equal sums, the one with the earliest columns for the earliest rows.
  /// Counts its steps in `nodes` and stops at ``nodeLimit``.
  static func bestChoice(_ table: [[Int?]], nodes: inout Int) -> (columns: [Int], score: Int)? {
    let columns = table.first?.count ?? 0
    // The most the rows from each one on can still add: a bound to prune with.
    var remaining = Array(repeating: 0, count: table.count + 1)
    for row in table.indices.reversed() {
      guard let most = table[row].compactMap({ $0 }).max() else { return nil }
      remaining[row] = remaining[row + 1] + most
    }
    var best: (columns: [Int], score: Int)?
    var chosen: [Int] = []
    var taken = Array(repeating: false, count: columns)
    func visit(_ row: Int, _ score: Int) {
      nodes += 1
      guard nodes <= nodeLimit else { return }
      if let best, score + remaining[row] <= best.score { return }
      guard row < table.count else {
        best = (chosen, score)
        return
      }
      for column in 0..<columns where !taken[column] {
        guard let points = table[row][column] else { continue }
        taken[column] = true
        chosen.append(column)
        visit(row + 1, score + points)
        chosen.removeLast()
        taken[column] = false
      }
    }
    visit(0, 0)
    return best
  }

  // MARK: - Types

  /// The best plan, or nil when the app's schema cannot play the lesson.
  mutating func best() -> Plan? {
    let count = uses.types.count
    // Each pair's fields, references aside: the final answer for a type without references,
    // and a bound for one with them.
    var free: [[(fields: [Int], score: Int)?]] = []
    for i in 0..<count {
      free.append(
        app.types.indices.map { a in structuralProblem(uses.types[i], app.types[a]) == nil ? bestFields(i, on: a, refs: nil) : nil })
    }
    let hasRefs = uses.types.map { used in used.fields.contains { $0.spec.referencedType != nil } }
    var remaining = Array(repeating: 0, count: count + 1)
    for i in (0..<count).reversed() {
      guard let most = free[i].compactMap({ $0?.score }).max() else { return nil }
      remaining[i] = remaining[i + 1] + most
    }

    var best: (plan: Plan, score: Int)?
    var chosen: [Int] = []
    var taken = Array(repeating: false, count: app.types.count)
    func leaf() {
      var refs: [String: String] = [:]
      for (i, a) in chosen.enumerated() { refs[uses.types[i].spec.name] = app.types[a].name }
      var fields: [[Int]] = []
      var score = 0
      for (i, a) in chosen.enumerated() {
        guard let played = hasRefs[i] ? bestFields(i, on: a, refs: refs) : free[i][a] else { return }
        fields.append(played.fields)
        score += played.score
      }
      if best.map({ score > $0.score }) ?? true { best = (Plan(types: chosen, fields: fields), score) }
    }
    func visit(_ i: Int, _ bound: Int) {
      nodes += 1
      guard nodes <= Self.nodeLimit else { return }
      if let best, bound + remaining[i] <= best.score { return }
      guard i < count else { return leaf() }
      for a in app.types.indices where !taken[a] {
        guard let played = free[i][a] else { continue }
        taken[a] = true
        chosen.append(a)
        visit(i + 1, bound + played.score)
        chosen.removeLast()
        taken[a] = false
      }
    }
    visit(0, 0)
    return best?.plan
  }
}

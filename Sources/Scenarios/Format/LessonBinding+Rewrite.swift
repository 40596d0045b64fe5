import Replica
import Simulator

/// How a lesson is rewritten on an app's schema: types and fields renamed, literals converted to
/// the app field's kind, everything else as written.
extension ScenarioFile {
  /// The app field that plays a lesson field, and what each literal written to it becomes.
  struct _FieldPlan {
    var app: String
    var literals: [Literal: Literal]
  }

  /// The app type that plays a lesson type, and the plan of each used field (by lesson name).
  struct _TypePlan {
    var app: String
    var fields: [String: _FieldPlan]
  }

  /// The file on `schema` as `plan` maps it, with its type maps and summary.
  func _rewritten(on schema: Schema, plan: _LessonSearch.Plan, uses: _LessonUses) -> LessonBinding {
    var plans: [String: _TypePlan] = [:]
    var maps: [LessonBinding.TypeMap] = []
    for (i, used) in uses.types.enumerated() {
      let type = schema.types[plan.types[i]]
      var fields: [String: _FieldPlan] = [:]
      var fieldMaps: [LessonBinding.FieldMap] = []
      for (k, field) in used.fields.enumerated() {
        let appField = type.fields[plan.fields[i][k]]
        fields[field.spec.name] = _FieldPlan(app: appField.name, literals: Self._converted(field.literals, from: field.spec, to: appField))
        fieldMaps.append(LessonBinding.FieldMap(lesson: field.spec.name, app: appField.name))
      }
      plans[used.spec.name] = _TypePlan(app: type.name, fields: fields)
      maps.append(LessonBinding.TypeMap(lesson: used.spec.name, app: type.name, fields: fieldMaps))
    }

    func field(_ type: String?, _ name: String) -> _FieldPlan? { type.flatMap { plans[$0]?.fields[name] } }
    func assignments(_ type: String?, _ list: [Assignment]) -> [Assignment] {
      list.map { a in
        guard let plan = field(type, a.field) else { return a }
        return Assignment(field: plan.app, value: plan.literals[a.value] ?? a.value, location: a.location)
      }
    }

    var file = self
    file.schema = schema
    file.schemaSource = nil
    file.schemaLines = [:]
    file.timeline = timeline.map { entry in
      var entry = entry
      switch entry.action {
      case .create(let device, let type, let id, let fields):
        entry.action = .create(device: device, type: plans[type]?.app ?? type, id: id, fields: assignments(type, fields))
      case .set(let device, let id, let fields):
        entry.action = .set(device: device, id: id, fields: assignments(uses.typeOfID[id], fields))
      case .append(let device, let id, let name, let text):
        entry.action = .append(device: device, id: id, field: field(uses.typeOfID[id], name)?.app ?? name, text: text)
      case .replace(let device, let id, let name, let old, let new):
        entry.action = .replace(device: device, id: id, field: field(uses.typeOfID[id], name)?.app ?? name, old: old, new: new)
      case .file(let device, let id, let name, let changed):
        entry.action = .file(device: device, id: id, field: field(uses.typeOfID[id], name)?.app ?? name, changed: changed)
      default:
        break
      }
      return entry
    }
    file.expectations = expectations.map { expectation in
      var expectation = expectation
      let original = expectation.kind
      switch original {
      case .fieldEquals(let id, let name, let value):
        if let plan = field(uses.typeOfID[id], name) {
          expectation.kind = .fieldEquals(id: id, field: plan.app, value: plan.literals[value] ?? value)
        }
      case .fieldIn(let id, let name, let values):
        if let plan = field(uses.typeOfID[id], name) {
          expectation.kind = .fieldIn(id: id, field: plan.app, values: values.map { plan.literals[$0] ?? $0 })
        }
      default:
        break
      }
      // Reports quote the text: it says what is now expected.
      if expectation.kind != original { expectation.text = Self._canonical(expectation.kind) }
      return expectation
    }

    let summary =
      maps.isEmpty
      ? nil
      : maps.map { map in
        map.fields.isEmpty
          ? "\(map.lesson) → \(map.app)"
          : "\(map.lesson) → \(map.app) (" + map.fields.map { "\($0.lesson) → \($0.app)" }.joined(separator: ", ") + ")"
      }.joined(separator: "; ")
    return LessonBinding(file: file, types: maps, summary: summary)
  }

  // MARK: - Literals

  /// What each literal written to a lesson field becomes on the app field that plays it. Distinct
  /// literals stay distinct:
  /// - a string on an int or date field is renumbered 1, 2, 3… (or 1s, 2s, 3s…) in order of first
  ///   appearance;
  /// - an int on a date field is that many seconds, a whole-second date on an int field that many
  ///   seconds (else both are renumbered);
  /// - an int or a date on a string field is its decimal text (`42`, `1.5s`);
  /// - anything else stays as written.
  static func _converted(_ literals: [Literal], from lesson: FieldSpec, to app: FieldSpec) -> [Literal: Literal] {
    let billion: Int64 = 1_000_000_000
    var out: [Literal: Literal] = [:]
    switch (lesson.kind, app.kind) {
    case (.string, .int), (.string, .date):
      return _renumbered(literals, lesson: lesson, app: app)
    case (.int, .date):
      let fits = literals.allSatisfy { if case .int(let n) = $0 { n >= 0 && n <= Int64.max / billion } else { false } }
      guard fits else { return _renumbered(literals, lesson: lesson, app: app) }
      for case .int(let n) in literals { out[.int(n)] = .duration(.seconds(n)) }
    case (.date, .int):
      let whole = literals.allSatisfy { if case .duration(let d) = $0 { d.nanoseconds % billion == 0 } else { false } }
      guard whole else { return _renumbered(literals, lesson: lesson, app: app) }
      for case .duration(let d) in literals { out[.duration(d)] = .int(d.nanoseconds / billion) }
    case (.int, .string), (.date, .string):
      for literal in literals {
        switch literal {
        case .int(let n): out[literal] = .string(String(n))
        case .duration(let d): out[literal] = .string(d.description)
        default: break
        }
      }
    default:
      break
    }
    return out
  }

  /// Literals numbered 1, 2, 3… in order (as ints, or as that many seconds for a date field),
  /// skipping the app field's default; the lesson field's own default, when written, becomes the
  /// app field's default.
  static func _renumbered(_ literals: [Literal], lesson: FieldSpec, app: FieldSpec) -> [Literal: Literal] {
    func number(_ n: Int64) -> Literal { app.kind == .date ? .duration(.seconds(n)) : .int(n) }
    let appDefault = app.defaultValue.flatMap(_literal(of:))
    let lessonDefault = lesson.defaultValue.flatMap(_literal(of:))
    var out: [Literal: Literal] = [:]
    var next: Int64 = 1
    for literal in literals {
      if let appDefault, literal == lessonDefault {
        out[literal] = appDefault
        continue
      }
      while number(next) == appDefault { next += 1 }
      out[literal] = number(next)
      next += 1
    }
    return out
  }

  /// A default value as a literal of its kind (nil for text and references).
  static func _literal(of value: Value) -> Literal? {
    switch value {
    case .string(let s): .string(s)
    case .int(let n): .int(n)
    case .bool(let b): .bool(b)
    case .date(let ns): .duration(SimDuration(nanoseconds: ns))
    case .double(let d): .double(d)
    case .bytes(let b): .bytes(b)
    case .null, .ref, .text, .content: nil
    }
  }
}

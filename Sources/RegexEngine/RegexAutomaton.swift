/// A pattern without backreferences and lookarounds as a Thompson automaton, searched by simulating
/// all its states at once (a Pike VM without captures): time linear in the string, whatever the
/// pattern's nesting of quantifiers.
///
/// It only answers whether there is a match, which is all its callers ask: without backreferences
/// and lookarounds, greedy, lazy and ECMA-262's empty-iteration rule cannot change that answer.
/// Counted repetitions are expanded (`a{2,4}` is `aa(a(a)?)?`), up to `maxInstructions`.
struct RegexAutomaton: Sendable {
    enum Instruction: Sendable {
        case atom(RegexAtom)
        /// Continue at both targets.
        case split(Int, Int)
        case jump(Int)
        case lineStart
        case lineEnd
        case wordBoundary(negated: Bool)
        case match
    }

    /// The largest automaton built; beyond it (deeply nested counted repetitions) the backtracker
    /// and its budget decide.
    static let maxInstructions = 20_000

    /// The budget of a search: a search takes at most 2 x (instructions + 1) x (bytes + 1) steps, so
    /// only a large automaton on a long string (a second or more of work) meets it.
    static let maxSteps = 1_000_000_000

    private let program: [Instruction]

    /// The automaton for `tree`; `nil` when the tree has a backreference or a lookaround, or when it
    /// expands past `maxInstructions`.
    init?(_ tree: RegexNode) {
        var builder = Builder()
        guard builder.emit(tree) else { return nil }
        builder.code.append(.match)
        program = builder.code
    }

    /// Whether `bytes` (valid UTF-8) have a match starting at offset 0 (`anchored`) or anywhere (at
    /// `firstByte`, when given); `.overBudget` after more than `budget` state visits.
    func search(_ bytes: UnsafeBufferPointer<UInt8>, anchored: Bool, firstByte: UInt8?, budget: Int) -> RegexResult {
        var current = StateSet(capacity: program.count), next = StateSet(capacity: program.count)
        var stack: [Int] = []
        let limit = budget
        var budget = budget
        var pos = 0
        while true {
            if current.isEmpty {
                if anchored && pos > 0 { return .notMatched }
                if let firstByte {
                    while pos < bytes.count && bytes[pos] != firstByte { pos += 1 }
                    if pos == bytes.count { return .notMatched }
                }
            }
            if !anchored || pos == 0 {
                if add(0, at: pos, to: &current, bytes, &stack, &budget) { return .matched }
            }
            if pos == bytes.count || (anchored && current.isEmpty) { return .notMatched }
            let (c, length) = bytes.scalar(at: pos)
            for k in 0..<current.count {
                let pc = current[k]
                guard case .atom(let a) = program[pc], a.matches(c) else { continue }
                if add(pc + 1, at: pos + length, to: &next, bytes, &stack, &budget) { return .matched }
            }
            budget -= current.count
            if budget < 0 { return .overBudget(steps: limit) }
            swap(&current, &next)
            next.removeAll()
            pos += length
        }
    }

    /// Adds the states reachable from `pc` at `pos` without consuming input; true when one is `match`.
    private func add(
        _ pc: Int, at pos: Int, to set: inout StateSet, _ bytes: UnsafeBufferPointer<UInt8>,
        _ stack: inout [Int], _ budget: inout Int
    ) -> Bool {
        stack.append(pc)
        while let pc = stack.popLast() {
            guard set.insert(pc) else { continue }
            budget -= 1
            switch program[pc] {
            case .atom:
                break
            case .split(let a, let b):
                stack.append(b)
                stack.append(a)
            case .jump(let target):
                stack.append(target)
            case .lineStart:
                if pos == 0 { stack.append(pc + 1) }
            case .lineEnd:
                if pos == bytes.count { stack.append(pc + 1) }
            case .wordBoundary(let negated):
                let before = pos > 0 && ScalarSet.isWord(UInt32(bytes[pos - 1]))
                let after = pos < bytes.count && ScalarSet.isWord(UInt32(bytes[pos]))
                if (before != after) != negated { stack.append(pc + 1) }
            case .match:
                stack.removeAll(keepingCapacity: true)
                return true
            }
        }
        return false
    }

    /// The states of one position: a sparse set (insert and clear in constant time), in insertion order.
    private struct StateSet {
        private var dense: [Int]
        private var sparse: [Int]
        private(set) var count = 0

        init(capacity: Int) {
            dense = Array(repeating: 0, count: capacity)
            sparse = Array(repeating: 0, count: capacity)
        }

        var isEmpty: Bool { count == 0 }

        subscript(k: Int) -> Int { dense[k] }

        /// Inserts `pc`; false when it was already there.
        mutating func insert(_ pc: Int) -> Bool {
            let k = sparse[pc]
            if k < count && dense[k] == pc { return false }
            sparse[pc] = count
            dense[count] = pc
            count += 1
            return true
        }

        mutating func removeAll() { count = 0 }
    }

    /// Turns the syntax tree into instructions, expanding counted repetitions.
    private struct Builder {
        var code: [Instruction] = []

        /// Appends the instructions for `node`; false when it cannot be (or grows too large).
        mutating func emit(_ node: RegexNode) -> Bool {
            guard code.count <= RegexAutomaton.maxInstructions else { return false }
            switch node {
            case .empty:
                return true
            case .atom(let a):
                code.append(.atom(a))
            case .lineStart:
                code.append(.lineStart)
            case .lineEnd:
                code.append(.lineEnd)
            case .wordBoundary(let negated):
                code.append(.wordBoundary(negated: negated))
            case .group(let body, _):
                return emit(body)
            case .sequence(let nodes):
                for n in nodes where !emit(n) { return false }
            case .alternation(let alternatives):
                var jumps: [Int] = []
                for alternative in alternatives.dropLast() {
                    let split = code.count
                    code.append(.jump(0))
                    guard emit(alternative) else { return false }
                    jumps.append(code.count)
                    code.append(.jump(0))
                    code[split] = .split(split + 1, code.count)
                }
                guard emit(alternatives[alternatives.count - 1]) else { return false }
                for j in jumps { code[j] = .jump(code.count) }
            case .quantified(let body, let min, let max, _):
                return emitQuantified(body, min: min, max: max)
            case .look, .backreference:
                return false
            }
            return code.count <= RegexAutomaton.maxInstructions
        }

        private mutating func emitQuantified(_ body: RegexNode, min: Int, max: Int?) -> Bool {
            for _ in 0..<min {
                let before = code.count
                guard emit(body) else { return false }
                if code.count == before { break }  // an empty body: further copies add nothing either
            }
            guard let max else {
                // loop: split(body, exit); body; jump loop
                let loop = code.count
                code.append(.jump(0))
                guard emit(body) else { return false }
                code.append(.jump(loop))
                code[loop] = .split(loop + 1, code.count)
                return true
            }
            // Optional copies, each skipping to the end: split(body, end); body; split(body, end); ...
            var splits: [Int] = []
            for _ in min..<max {
                splits.append(code.count)
                code.append(.jump(0))
                guard emit(body) else { return false }
            }
            for s in splits { code[s] = .split(s + 1, code.count) }
            return true
        }
    }
}

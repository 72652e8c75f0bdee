/// A count with its noun in the right number: `1 warning`, `2 warnings`, `1 entry`, `3 entries`.
func counted(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}

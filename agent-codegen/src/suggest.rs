//! Did-you-mean: the known name a misspelt one most likely meant. Attribute keys, template
//! names, workflow steps and fields all suggest alike.

/// The candidate closest to `name`, if it is close enough to be a typo of it.
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .filter_map(|c| {
            let distance = edit_distance(name, c);
            let near = distance <= limit || (name.len() >= 3 && c.contains(name));
            near.then_some((distance, c))
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, c)| c)
}

/// Edit distance in characters, counting a swap of two neighbours as one edit (optimal string
/// alignment): `feild` is one edit from `field`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

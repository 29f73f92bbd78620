-- Known algorithm names (Appendix M). The renamed descriptions keep the names of published
-- algorithms, protocols and classic problems; a task is marked when its renamed
-- description contains a term of a list. The paper names examples ("Paxos, the Bakery
-- algorithm, Euclid's algorithm or the dining philosophers"; the broader list "adds
-- problem words such as consensus, mutual exclusion and spanning tree"); the lists below
-- are this project's, written out so that every marked task can be traced to a term.
-- Patterns are RE2 regular expressions matched against the lower-cased description.

-- v_known_name_terms: one row per (list_name, term): list_name 'fixed' (algorithm,
-- protocol and classic-problem names) or 'broader' (every fixed term plus problem words).
-- Reads: no table.
CREATE OR REPLACE VIEW v_known_name_terms AS
WITH fixed(term, pattern) AS (VALUES
  ('Paxos', '\bpaxos\b'), ('Raft', '\braft\b'), ('Zab', '\bzab\b'), ('Chord', '\bchord\b'),
  ('Bakery', '\bbakery\b'), ('Boulangerie', '\bboulangerie\b'),
  ('Euclid', '\beuclid'), ('Peterson', '\bpeterson\b'), ('Dekker', '\bdekker\b'),
  ('Dijkstra', '\bdijkstra\b'), ('EWD', '\bewd[- ]?[0-9]+\b'), ('Safra', '\bsafra\b'),
  ('Misra', '\bmisra\b'), ('Huang', '\bhuang\b'), ('Knuth', '\bknuth\b'),
  ('Chandy-Lamport', '\bchandy[- ](and[- ])?lamport\b'),
  ('Chang-Roberts', '\bchang[- ](and[- ])?roberts\b'),
  ('Ricart-Agrawala', '\bricart[- ](and[- ])?agrawala\b'),
  ('Bosco', '\bbosco\b'), ('Yo-Yo', '\byo[- ]?yo\b'), ('Chameneos', '\bchameneos\b'),
  ('Slush/Snowball/Avalanche', '\b(slush|snowflake|snowball|avalanche)\b'),
  ('Disruptor', '\bdisruptor\b'), ('B-tree', '\bb[- ]?tree\b'), ('TCP', '\btcp\b'),
  ('two-phase commit', '\btwo[- ]phase[- ]commit'), ('three-phase commit', '\bthree[- ]phase[- ]commit'),
  ('Byzantine generals', '\bbyzantine[- ]generals?\b'),
  ('dining philosophers', '\bdining[- ]philosophers?\b'),
  ('cigarette smokers', '\bcigarette[- ]smokers?\b'),
  ('readers-writers', '\breaders?[- ](and[- ])?writers?\b'),
  ('sleeping barber', '\bsleeping[- ]barber\b'),
  ('producer-consumer', '\bproducer[- ]consumer\b'),
  ('Tower of Hanoi', '\btowers? of hanoi\b'), ('N-Queens', '\b(n|eight|8)[- ]queens?\b'),
  ('Game of Life', '\bgame of life\b'), ('missionaries and cannibals', '\bmissionaries\b'),
  ('Einstein riddle', '\beinstein\b'), ('Die Hard', '\bdie ?hard\b'),
  ('Car Talk puzzle', '\bcar ?talk\b'), ('coffee can', '\bcoffee[- ]can\b')
),
problems(term, pattern) AS (VALUES
  -- problem words: named problems of distributed and concurrent computing. Ordinary words
  -- that the paper keeps as domain words (barrier, process, buffer) are not on the list.
  ('consensus', '\bconsensus\b'), ('mutual exclusion', '\bmutual(ly)?[- ]exclusi'),
  ('spanning tree', '\bspanning[- ]trees?\b'), ('leader election', '\bleader[- ]election\b'),
  ('termination detection', '\btermination[- ]detection\b'),
  ('atomic commit', '\batomic[- ]commit'), ('transaction commit', '\btransaction[- ]commit'),
  ('reliable broadcast', '\b(reliable|byzantine|atomic)[- ]broadcast\b'),
  ('failure detector', '\bfailure[- ]detectors?\b'),
  ('state machine replication', '\bstate[- ]machine[- ]replication\b')
)
SELECT 'fixed' AS list_name, term, pattern FROM fixed
UNION ALL SELECT 'broader', term, pattern FROM fixed
UNION ALL SELECT 'broader', term, pattern FROM problems;

-- v_known_names: one row per (test-set task, list_name): marked when the task's renamed
-- description (renamed_tasks.description; the original description when the task has no
-- renamed one) matches a term of the list; matched_terms lists them (sorted, '; ').
-- Reads: test_set, renamed_tasks, tasks, v_known_name_terms.
CREATE OR REPLACE VIEW v_known_names AS
WITH d AS (
  SELECT s.task_id, lower(coalesce(r.description, t.description, '')) AS description
  FROM test_set s
  LEFT JOIN renamed_tasks r USING (task_id)
  LEFT JOIN tasks t USING (task_id)
  WHERE s.in_test_set
),
hits AS (
  SELECT d.task_id, k.list_name, k.term
  FROM d JOIN v_known_name_terms k ON regexp_matches(d.description, k.pattern)
)
SELECT d.task_id, l.list_name,
       count(h.term) > 0 AS marked,
       CASE WHEN count(h.term) = 0 THEN NULL ELSE string_agg(h.term, '; ' ORDER BY h.term) END AS matched_terms
FROM d
CROSS JOIN (VALUES ('fixed'), ('broader')) l(list_name)
LEFT JOIN hits h ON h.task_id = d.task_id AND h.list_name = l.list_name
GROUP BY d.task_id, l.list_name;

-- v_known_name_split (Appendix M): v_paired_rates with each list's mark: one row per
-- (model, grade, task_id, list_name) with the original/random rates, the decrease
-- (original - random, a fraction) and `marked`.
-- Reads: v_paired_rates (verdicts, test_set, control_eligibility), v_known_names.
CREATE OR REPLACE VIEW v_known_name_split AS
SELECT p.model, p.grade, p.task_id, k.list_name, k.marked, k.matched_terms, p.behavior_covered,
       p.original_rate, p.random_rate, p.decrease
FROM v_paired_rates p
JOIN v_known_names k USING (task_id);

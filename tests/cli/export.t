`gmsim export --format perfetto`: Chrome trace-event JSON for
ui.perfetto.dev (docs/formats.md#perfetto).  A placement instance gives a
small trace with times; a mark with characters that need escaping is added
through CSV:

  $ printf 'id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\n' > input.12.csv
  $ gmsim import input.12.csv -o run.db > /dev/null
  $ gmsim export run.db --format perfetto
  {"displayTimeUnit":"ns","otherData":{"trace":"input.12","time_base":"ns"},"traceEvents":[
  {"ph":"M","pid":1,"tid":0,"name":"process_name","args":{"name":"trace input.12"}},
  {"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"marks"}},
  {"ph":"C","pid":1,"name":"requested","ts":0.000,"args":{"bytes":4}},
  {"ph":"C","pid":1,"name":"requested","ts":0.000,"args":{"bytes":8}},
  {"ph":"C","pid":1,"name":"requested","ts":0.003,"args":{"bytes":4}},
  {"ph":"C","pid":1,"name":"requested","ts":0.003,"args":{"bytes":8}},
  {"ph":"C","pid":1,"name":"requested","ts":0.009,"args":{"bytes":4}},
  {"ph":"C","pid":1,"name":"requested","ts":0.009,"args":{"bytes":0}}
  ]}
  $ printf '1000,mark,"say ""hi""\\ now",,,0\n2000,alloc,1,64,0,0\n' > m.csv
  $ gmsim import m.csv -o run.db > /dev/null
  $ gmsim export run.db --trace m --format perfetto | grep '"i"'
  {"ph":"i","s":"t","pid":1,"tid":1,"name":"say \"hi\"\\ now","ts":1.000},

With --runs, each stored replay run of the trace is a counter track of its
own (requested, allocated, reserved at each timeline point):

  $ gmsim replay run.db --trace input.12 --policy native --save > /dev/null
  $ gmsim export run.db --trace input.12 --format perfetto --runs -o out.json
  $ grep -c '"pid":2' out.json
  [0-9]+ (re)
  $ grep '"process_name"' out.json
  {"ph":"M","pid":1,"tid":0,"name":"process_name","args":{"name":"trace input.12"}},
  {"ph":"M","pid":2,"tid":0,"name":"process_name","args":{"name":"native (run 1)"}},
  $ tail -c 3 out.json
  ]}

Errors: --runs is for perfetto; an unknown trace; a full disk removes the
partial file it created:

  $ gmsim export run.db --trace m --runs
  gmsim: --runs needs --format perfetto
  usage: gmsim export DB [--trace NAME] [--format FMT] [--runs]
                     [--param offline.KEY=VALUE]... [-o FILE]
  [2]
  $ gmsim export run.db --trace nope --format perfetto
  gmsim: no trace named 'nope' in 'run.db', which holds 2: 'input.12', 'm'
  [1]
  $ gmsim export run.db --trace input.12 --format perfetto -o /dev/full
  gmsim: cannot write '/dev/full': no space left on device
  [1]

`--format placement`: the offline planner's plan as minimalloc's columns
plus each allocation's offset; the plan's status goes to stderr.  Two
buffers live together sit apart, the third reuses the first's bytes:

  $ gmsim export run.db --trace input.12 --format placement --param offline.align=1
  id,lower,upper,size,offset
  0,0,3,4,4
  1,0,9,4,0
  2,3,9,4,4
  plan of 'input.12': optimal, 8 bytes, lower bound 8, capacity 12 met
  $ gmsim export run.db --trace input.12 --format placement --param offline.align=1 2> /dev/null | awk -F, 'NR > 1 && $5 + $4 > top { top = $5 + $4 } END { print top }'
  8
  $ gmsim export run.db --trace input.12 --format csv --param offline.align=1
  gmsim: --param needs --format placement
  usage: gmsim export DB [--trace NAME] [--format FMT] [--runs]
                     [--param offline.KEY=VALUE]... [-o FILE]
  [2]
  $ gmsim export run.db --trace input.12 --format placement --param bfc.align=1
  gmsim: invalid --param 'bfc.align=1' (expected offline.KEY=VALUE)
  usage: gmsim export DB [--trace NAME] [--format FMT] [--runs]
                     [--param offline.KEY=VALUE]... [-o FILE]
  [2]

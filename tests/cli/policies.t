`gmsim policies` lists every registered policy with its parameters (the
list grows as policies are added, hence the "..." lines).

  $ gmsim policies
  ...
  native: * (glob)
    parameter  type  default  help
    chunk      size  0        the driver packs requests into chunks of this size * (glob)
  ...
  buddy: * (glob)
    parameter  type  +default  help (re)
    min_block  size  +512 +.* (re)
    arena  +size  +1GiB +.* (re)
    release  +never\|empty  +never +.* (re)
  ...

The JSON form has the same content: name, help, and each parameter's name,
type, default, help and (for enumerations) choices.

  $ gmsim policies --json > p.json
  $ head -3 p.json
  {
    "policies": [
      {
  $ grep -c '"name": "native"' p.json
  1
  $ grep -A30 '"name": "buddy"' p.json | grep -A12 '"name": "release"'
            "name": "release",
            "type": "enum",
            "default": "never",
            "help": * (glob)
            "choices": [
              "never",
              "empty"
            ]
          }
        ]
      },? (re)
  ...

Every policy listed can be replayed:

  $ gmsim synth --events 2000 -o t.db > /dev/null
  $ for p in $(gmsim policies --json | sed -n 's/^      "name": "\(.*\)",$/\1/p'); do
  >   gmsim replay t.db --policy "$p" --json > /dev/null || echo "$p failed"
  > done

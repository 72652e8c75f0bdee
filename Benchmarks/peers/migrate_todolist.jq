# The jq peer for `dumpkit migrate --plan schemas/todolist/plan.yaml --on-error keep`:
# the Salada ToDo v1 -> v2 migration as a user would write it in jq.
#
#   jq -c -f Benchmarks/peers/migrate_todolist.jq v1.json > v2.json
#
# Each record under /v1/todolist gets, in the plan's order:
#   rename    _createdAt -> createdAt, _updatedAt -> updatedAt, photo_count -> photoCount
#             (left alone when the new name is taken);
#   convert   photoCount from string to integer when the string is an integer written the way
#             the integer prints ("0", "12", "-3"); "", "２" (full-width), "007", "1.0" stay strings,
#             as DumpKit keeps values that would not convert back to the same text (\A and \z,
#             not ^ and $, which would accept "2\n");
#   map       progress これから着手/着手中/完了 -> todo/doing/done; other values stay;
#   collect   image1..image3 into images, skipping missing ones, only when the present ones come
#             first (image2 without image1 is left as it is, like DumpKit's exact collect) and
#             no images field exists yet;
#   normalize era-1 names in images (bare strings) become {name}; data: URIs, era-2 objects and
#             anything else stay;
# and moves to /v2/todolist/{id}; /v1 disappears when todolist was all it held (the database
# has no empty objects). Everything else is left alone.
#
# Limits (not in the generated data): jq 1.6 keeps numbers as doubles, so integers beyond 2^53
# lose precision; a record already at /v2/todolist/{id} is overwritten (DumpKit reports it).

def progress_table: {"これから着手": "todo", "着手中": "doing", "完了": "done"};

def rename($from; $to):
  if has($from) and (has($to) | not) then .[$to] = .[$from] | del(.[$from]) else . end;

def file_object:
  if type == "string" and (startswith("data:") | not) then {name: .} else . end;

def migrate:
  if type != "object" then . else
    rename("_createdAt"; "createdAt")
    | rename("_updatedAt"; "updatedAt")
    | rename("photo_count"; "photoCount")
    | if (.photoCount | type) == "string" and (.photoCount | test("\\A(0|-?[1-9][0-9]*)\\z"))
      then .photoCount |= tonumber else . end
    | if (.progress | type) == "string" and progress_table[.progress] != null
      then .progress = progress_table[.progress] else . end
    | [has("image1"), has("image2"), has("image3")] as $present
    # present fields first: true...true false...false is the list sorted descending
    | if ($present | any) and (has("images") | not) and $present == ($present | sort | reverse)
      then .images = [.image1, .image2, .image3][:($present | map(select(.)) | length)]
           | del(.image1, .image2, .image3)
      else . end
    | if (.images | type) == "array" then .images |= map(file_object)
      elif has("images") then .images |= file_object
      else . end
  end;

if (.v1.todolist | type) == "object" then
  .v1.todolist as $records
  | del(.v1.todolist)
  | if .v1 == {} then del(.v1) else . end
  # reduce, not map_values: `map_values(f)` (`.[] |= f`) is quadratic in jq 1.6 (two minutes
  # for the 5 MB dump); building the object key by key is linear.
  | .v2.todolist = ((.v2.todolist // {})
                    + reduce ($records | keys_unsorted[]) as $id ({}; .[$id] = ($records[$id] | migrate)))
else . end

-- bench/serve_post.lua - wrk's requests for bench/serve_load.sh and
-- bench/serve_rest_grpc.py: POST the file of the first script argument, with
-- the binary extension's header length from the second when given.
function init(args)
  local f = assert(io.open(args[1], "rb"))
  wrk.method = "POST"
  wrk.body = f:read("*a")
  f:close()
  wrk.headers["Content-Type"] = "application/json"
  if args[2] then wrk.headers["Inference-Header-Content-Length"] = args[2] end
end

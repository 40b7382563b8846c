//! Pools and models: where models run, and what stays loaded there.

use pest::iterators::Pair;

use super::ast::*;
use super::grammar::{Block, Rule};
use super::parse::Builder;
use crate::diagnostic::Span;

impl Builder {
    pub(super) fn pool(&mut self, pair: Pair<Rule>, span: Span) -> Option<PoolDecl> {
        let (it, name) = self.named(pair)?;
        let mut d = PoolDecl {
            broken: Vec::new(),
            name,
            span,
            host: None,
            gpus: None,
            link: None,
            vram: None,
            compute: None,
            serve: None,
            slots: None,
            binary: None,
            gpu: None,
            bandwidth: None,
            min_build: None,
            min_build_because: None,
            api_key_env: None,
        };
        for (e, rule, espan, key, first, _, mut inner) in self.entries(it) {
            let _ = (|| -> Option<()> {
                match rule {
                    Rule::host_e => {
                        let v = self.string(inner.next()?);
                        self.set(&mut d.host, v, &key, espan, first);
                    }
                    Rule::gpus_e => {
                        let ids: Vec<_> = inner.filter_map(|p| self.int_u32(p)).collect();
                        self.set(&mut d.gpus, Spanned::new(ids, espan), &key, espan, first);
                    }
                    Rule::link_e => {
                        let v = self.name(inner.next()?);
                        self.set(&mut d.link, v, &key, espan, first);
                    }
                    Rule::vram_e => {
                        let v = self.vram(inner.next()?)?;
                        self.set(&mut d.vram, Spanned::new(v, espan), &key, espan, first);
                    }
                    Rule::compute_e => {
                        let v = self.decimal(inner.next()?)?;
                        self.set(&mut d.compute, v, &key, espan, first);
                    }
                    Rule::serve_e => {
                        let kind = self.name(inner.next()?);
                        inner.next();
                        let endpoint = self.string(inner.next()?);
                        let v = Serve {
                            kind,
                            endpoint,
                            span: espan,
                        };
                        self.set(&mut d.serve, v, &key, espan, first);
                    }
                    Rule::slots_e => {
                        let v = self.int_u32(inner.next()?)?;
                        self.set(&mut d.slots, v, &key, espan, first);
                    }
                    Rule::binary_e => {
                        let v = self.string(inner.next()?);
                        self.set(&mut d.binary, v, &key, espan, first);
                    }
                    Rule::gpu_e => {
                        let v = self.name(inner.next()?);
                        self.set(&mut d.gpu, v, &key, espan, first);
                    }
                    Rule::bandwidth_e => {
                        let v = self.size(inner.next()?)?;
                        self.set(&mut d.bandwidth, v, &key, espan, first);
                    }
                    Rule::min_build_e => {
                        let v = self.int_u32(inner.next()?)?;
                        inner.next();
                        d.min_build_because = inner.next().map(|s| self.string(s));
                        self.set(&mut d.min_build, v, &key, espan, first);
                    }
                    Rule::api_key_e => {
                        inner.next();
                        let v = self.string(inner.next()?);
                        self.set(&mut d.api_key_env, v, &key, espan, first);
                    }
                    Rule::bad_entry => d.broken.extend(self.bad_entry(&e, Block::Pool)),
                    _ => {}
                }
                Some(())
            })();
        }
        Some(d)
    }

    pub(super) fn vram(&mut self, p: Pair<Rule>) -> Option<Vram> {
        match p.as_rule() {
            Rule::vram_repeat => {
                let mut it = p.into_inner();
                let count = self.int_u32(it.next()?)?;
                let size = self.size(it.next()?)?;
                Some(Vram::Repeat {
                    count,
                    size: size.node,
                })
            }
            _ => Some(Vram::List(
                p.into_inner().filter_map(|s| self.size(s)).collect(),
            )),
        }
    }

    pub(super) fn model(&mut self, pair: Pair<Rule>, span: Span) -> Option<ModelDecl> {
        let (mut it, name) = self.named(pair)?;
        it.next();
        let pool = self.name(it.next()?);
        let mut d = ModelDecl {
            broken: Vec::new(),
            name,
            pool,
            span,
            gguf: None,
            tag: None,
            weights: None,
            ctx: None,
            kv: None,
            kv_k: None,
            kv_v: None,
            flash_attn: None,
            min_decode: None,
            layers: None,
            kv_heads: None,
            head_dim: None,
            quant: None,
            dtype: None,
            params: None,
            active: None,
            sampling: Vec::new(),
        };
        for (e, rule, espan, key, first, head, mut inner) in self.entries(it) {
            let _ = (|| -> Option<()> {
                match rule {
                    Rule::gguf_e => {
                        let v = self.string(inner.next()?);
                        self.set(&mut d.gguf, v, &key, espan, first);
                    }
                    Rule::tag_e => {
                        let v = self.string(inner.next()?);
                        self.set(&mut d.tag, v, &key, espan, first);
                    }
                    Rule::weights_e => {
                        let v = self.size(inner.next()?)?;
                        self.set(&mut d.weights, v, &key, espan, first);
                    }
                    Rule::ctx_e => {
                        let v = self.count(inner.next()?)?;
                        self.set(&mut d.ctx, v, &key, espan, first);
                    }
                    Rule::kv_e
                    | Rule::kv_k_e
                    | Rule::kv_v_e
                    | Rule::flash_e
                    | Rule::quant_e
                    | Rule::dtype_e => {
                        let v = self.name(inner.next()?);
                        let slot = match rule {
                            Rule::kv_e => &mut d.kv,
                            Rule::kv_k_e => &mut d.kv_k,
                            Rule::kv_v_e => &mut d.kv_v,
                            Rule::flash_e => &mut d.flash_attn,
                            Rule::quant_e => &mut d.quant,
                            _ => &mut d.dtype,
                        };
                        let mut tmp = slot.take();
                        self.set(&mut tmp, v, &key, espan, first);
                        *slot = tmp;
                    }
                    Rule::min_decode_e => {
                        let v = self.decimal(inner.next()?)?;
                        self.set(&mut d.min_decode, v, &key, espan, first);
                    }
                    Rule::layers_e | Rule::kv_heads_e | Rule::head_dim_e => {
                        let v = self.int_u32(inner.next()?)?;
                        let slot = match rule {
                            Rule::layers_e => &mut d.layers,
                            Rule::kv_heads_e => &mut d.kv_heads,
                            _ => &mut d.head_dim,
                        };
                        let mut tmp = slot.take();
                        self.set(&mut tmp, v, &key, espan, first);
                        *slot = tmp;
                    }
                    Rule::params_e => {
                        let v = self.billions(inner.next()?)?;
                        inner.next();
                        d.active = inner.next().and_then(|a| self.billions(a));
                        self.set(&mut d.params, v, &key, espan, first);
                    }
                    Rule::sampling_e => {
                        let key_pair = head?;
                        let s = self.sampling(key_pair, inner.next()?)?;
                        if let Some(prev) = d.sampling.iter().find(|x| x.key.node == s.key.node) {
                            let prev_span = prev.key.span;
                            self.duplicate(&key, espan, prev_span);
                        } else {
                            d.sampling.push(s);
                        }
                    }
                    Rule::bad_entry => d.broken.extend(self.bad_entry(&e, Block::Model)),
                    _ => {}
                }
                Some(())
            })();
        }
        Some(d)
    }

    /// `122B` → 122.0 (billions of parameters).
    fn billions(&mut self, p: Pair<Rule>) -> Option<Spanned<f64>> {
        let span = self.span(&p);
        let v: f64 = p.as_str().trim_end_matches('B').parse().ok()?;
        Some(Spanned::new(v, span))
    }

    pub(super) fn sampling(
        &mut self,
        key: Pair<Rule>,
        value: Pair<Rule>,
    ) -> Option<SamplingSetting> {
        let key = self.name(key);
        let value = self.decimal(value)?;
        Some(SamplingSetting { key, value })
    }
}
